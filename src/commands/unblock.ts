import * as Args from '@oclif/core/args'
import {HelixCommand} from '../cli/base-command.js'

export default class Unblock extends HelixCommand {
  static override description = "Make a blocked bead selectable again: remove its 'blocked' label and turn status blocked into open"
  static override args = {id: Args.string({required: true, description: 'bead id'})}

  async run(): Promise<void> {
    const {args} = await this.parse(Unblock)
    const {unblockBead} = await import('../operator/unblock.js')
    this.out(await unblockBead(args.id))
  }
}
