import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {trackerReadyOutput} from '../../tracker/query-text.js'

export default class TrackerReady extends HelixCommand {
  static override description = 'List beads ready to work on, in selection order'
  static override flags = {
    json: Flags.boolean({description: 'print a JSON array of bead records'}),
    execution: Flags.boolean({description: 'accepted for DDx compatibility; same set'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TrackerReady)
    process.stdout.write(await trackerReadyOutput({json: flags.json}))
  }
}
