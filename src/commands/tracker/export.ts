import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {projectPaths} from '../../util/root.js'
import {exportToBd} from '../../tracker/admin.js'

export default class TrackerExport extends HelixCommand {
  static override description = 'Export the tracker as beads (bd) JSONL (to stdout, or --file)'
  static override flags = {
    to: Flags.string({required: true, options: ['bd'], description: 'target format'}),
    file: Flags.string({description: 'target file (default: stdout)'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TrackerExport)
    const {text, report} = await exportToBd(projectPaths(), flags.file)
    if (report.file === '-') process.stdout.write(text)
    else this.err(`helix: exported ${report.count} bead(s) to ${report.file}`)
  }
}
