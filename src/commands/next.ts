import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../cli/base-command.js'
import {unexpectedArgument} from '../util/errors.js'
import {nextOutput} from '../operator/next.js'

export default class Next extends HelixCommand {
  // Declared (hidden) only so that a stray word reaches this command and is
  // refused in one line, instead of oclif looking for a command 'next:<word>'.
  static override args = {unexpected: Args.string({hidden: true})}

  static override description = "Print the id and title of the bead `helix run` would select now, or 'no ready issues'"

  static override flags = {
    json: Flags.boolean({description: 'print {"id", "title"} of that bead, or null', default: false}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Next)
    if (args.unexpected !== undefined) throw unexpectedArgument(this.id, [args.unexpected])
    process.stdout.write(await nextOutput({json: flags.json}))
  }
}
