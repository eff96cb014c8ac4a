import {Args, Flags} from '@oclif/core'
import {HelixCommand} from '../../util/base-command.js'
import {projectPaths} from '../../util/root.js'
import {readTracker} from '../../tracker/store.js'
import {serializeBead} from '../../tracker/codec.js'
import {showText} from '../../app/tracker-report.js'
import {notFound} from '../../tracker/ops.js'

export default class TrackerShow extends HelixCommand {
  static override description = 'Show one bead'
  static override args = {id: Args.string({required: true, description: 'bead id'})}
  static override flags = {json: Flags.boolean({description: 'print the record as JSON'})}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TrackerShow)
    const snap = await readTracker(projectPaths().file)
    const b = snap.byId.get(args.id)
    if (!b) throw notFound(args.id)
    process.stdout.write(flags.json ? serializeBead(b) + '\n' : showText(b, snap))
  }
}
