import {Args, Flags} from '@oclif/core'
import {HelixCommand} from '../../util/base-command.js'
import {projectPaths} from '../../util/root.js'
import {closeBead} from '../../tracker/ops.js'
import {sanitize} from '../../util/sanitize.js'
import {serializeBead} from '../../tracker/codec.js'

export default class TrackerClose extends HelixCommand {
  static override description = 'Close a bead (refuses while a dependency is open; fenced by HELIX_CLAIM_TOKEN)'
  static override args = {id: Args.string({required: true, description: 'bead id'})}
  static override flags = {json: Flags.boolean({description: 'print the closed record'})}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TrackerClose)
    const bead = await closeBead(projectPaths(), args.id, {
      claimToken: process.env.HELIX_CLAIM_TOKEN,
      targetId: process.env.HELIX_BEAD_ID,
    })
    this.out(flags.json ? serializeBead(bead) : `closed ${sanitize(bead.id)}`)
  }
}
