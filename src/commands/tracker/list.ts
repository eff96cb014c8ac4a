import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {projectPaths} from '../../util/root.js'
import {readTracker} from '../../tracker/store.js'
import {statusOf} from '../../tracker/queries.js'
import {listLine, jsonLine} from '../../tracker/query-text.js'
import {STATUSES} from '../../tracker/types.js'
import {HelixError, EXIT} from '../../util/errors.js'
import {sanitize} from '../../util/sanitize.js'

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
    // a typo (`--status in-progress`) is not "no such beads": a status no bead has and
    // helix does not know is refused (a tracker's own extra statuses still filter)
    if (flags.status !== undefined && !(STATUSES as readonly string[]).includes(flags.status) && !snap.beads.some((b) => statusOf(b) === flags.status)) {
      throw new HelixError(`invalid --status '${sanitize(flags.status)}': expected one of ${STATUSES.join(', ')}`, EXIT.ERROR)
    }
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
