import * as Args from '@oclif/core/args'
import {HelixCommand} from '../../../cli/base-command.js'
import {projectPaths} from '../../../util/root.js'
import {readTracker} from '../../../tracker/store.js'
import {depTreeText} from '../../../tracker/query-text.js'
import {notFound} from '../../../tracker/ops.js'

export default class TrackerDepTree extends HelixCommand {
  static override description = 'Show what <id> depends on, recursively'
  static override args = {id: Args.string({required: true, description: 'bead id (root of the tree)'})}

  async run(): Promise<void> {
    const {args} = await this.parse(TrackerDepTree)
    const snap = await readTracker(projectPaths().file)
    if (!snap.byId.has(args.id)) throw notFound(args.id)
    process.stdout.write(depTreeText(snap, args.id))
  }
}
