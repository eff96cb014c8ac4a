import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {trackerBlockedOutput} from '../../tracker/query-text.js'

export default class TrackerBlocked extends HelixCommand {
  static override description = 'List open beads waiting on dependencies, and beads with status blocked'
  static override flags = {
    json: Flags.boolean({description: 'print a JSON array of records, each with waiting_on'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TrackerBlocked)
    process.stdout.write(await trackerBlockedOutput({json: flags.json}))
  }
}
