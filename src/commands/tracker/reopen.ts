import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {projectPaths} from '../../util/root.js'
import {reopenBead, fenceFromEnv} from '../../tracker/ops.js'
import {sanitize} from '../../util/sanitize.js'
import {serializeBead} from '../../tracker/codec.js'

export default class TrackerReopen extends HelixCommand {
  static override description = 'Reopen a closed, in_progress or blocked bead'
  static override args = {id: Args.string({required: true, description: 'bead id'})}
  static override flags = {
    reason: Flags.string({description: 'appended to notes (default: none)'}),
    json: Flags.boolean({description: 'print the reopened record'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TrackerReopen)
    const bead = await reopenBead(projectPaths(), args.id, flags.reason, fenceFromEnv())
    this.out(flags.json ? serializeBead(bead) : `reopened ${sanitize(bead.id)}`)
  }
}
