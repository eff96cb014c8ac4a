import {Args} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {HelixError, EXIT} from '../util/errors.js'
import {nextOutput} from '../status/next.js'

export default class Next extends HelixCommand {
  // Declared (hidden) only so that a stray word reaches this command and is
  // refused in one line, instead of oclif looking for a command 'next:<word>'.
  static override args = {unexpected: Args.string({hidden: true})}

  static override description = "Print the id `helix run` would select now, or 'no ready issues'"

  async run(): Promise<void> {
    const {args} = await this.parse(Next)
    if (args.unexpected !== undefined) throw new HelixError(`unexpected argument: ${args.unexpected}`, EXIT.ERROR)
    process.stdout.write(await nextOutput())
  }
}
