import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {projectPaths} from '../../util/root.js'
import {sanitize} from '../../util/sanitize.js'
import {importFromBd} from '../../tracker/admin.js'

export default class TrackerImport extends HelixCommand {
  static override description = 'Import beads (bd) JSONL into the tracker; existing ids are skipped and reported'
  static override flags = {
    from: Flags.string({required: true, options: ['bd'], description: 'source format'}),
    file: Flags.string({description: 'source file (default .beads/issues.jsonl)'}),
    json: Flags.boolean({description: 'print {file, count, skipped} as JSON'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TrackerImport)
    const r = await importFromBd(projectPaths(), flags.file)
    if (flags.json) {
      this.out(JSON.stringify(r))
      return
    }
    for (const s of r.skipped) this.err(`helix: skipped ${s.id === undefined ? `line ${s.line}` : sanitize(s.id)}: ${sanitize(s.why)}`)
    this.out(`imported ${r.count} bead(s) from ${sanitize(r.file)}, skipped ${r.skipped.length}`)
  }
}
