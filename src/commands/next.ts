import {HelixCommand} from '../util/base-command.js'
import {nextOutput} from '../status/next.js'

export default class Next extends HelixCommand {
  static override description = "Print the id `helix run` would select now, or 'no ready issues'"

  async run(): Promise<void> {
    await this.parse(Next)
    process.stdout.write(await nextOutput())
  }
}
