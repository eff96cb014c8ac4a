import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {trackerCloseOutput} from '../../tracker/show-close.js'

export default class TrackerClose extends HelixCommand {
  static override description = 'Close a bead (refuses while a dependency is open; fenced by HELIX_CLAIM_TOKEN)'
  static override args = {id: Args.string({required: true, description: 'bead id'})}
  static override flags = {json: Flags.boolean({description: 'print the closed record'})}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TrackerClose)
    this.out(await trackerCloseOutput(args.id, {json: flags.json}))
  }
}
