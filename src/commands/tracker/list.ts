import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {projectPaths} from '../../util/root.js'
import {readTracker} from '../../tracker/store.js'
import {statusOf} from '../../tracker/queries.js'
import {listLine, jsonLine} from '../../tracker/query-text.js'

export default class TrackerList extends HelixCommand {
  static override description = 'List beads in file order'
  static override flags = {
    status: Flags.string({description: 'only beads with this status (missing status counts as open) (default: every status)'}),
    label: Flags.string({description: 'only beads carrying this label (default: any)'}),
    json: Flags.boolean({description: 'print a JSON array of records'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TrackerList)
    const snap = await readTracker(projectPaths().file)
    const beads = snap.beads.filter(
      (b) =>
        (flags.status === undefined || statusOf(b) === flags.status) &&
        (flags.label === undefined || (Array.isArray(b.labels) && b.labels.includes(flags.label))),
    )
    if (flags.json) {
      process.stdout.write(jsonLine(beads))
      return
    }
    let out = ''
    for (const b of beads) out += listLine(b) + '\n'
    process.stdout.write(out)
  }
}
