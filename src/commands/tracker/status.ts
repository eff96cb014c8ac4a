import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {trackerStatusOutput} from '../../tracker/query-text.js'

export default class TrackerStatus extends HelixCommand {
  static override description = 'Count beads by status, plus blocked and ready'
  static override flags = {
    json: Flags.boolean({description: 'print {total, open, in_progress, closed, blocked, proposed, cancelled, ready}'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TrackerStatus)
    process.stdout.write(await trackerStatusOutput({json: flags.json}))
  }
}
