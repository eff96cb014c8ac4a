import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {projectPaths} from '../../util/root.js'
import {doctorTracker, doctorText} from '../../tracker/admin.js'
import {orphanThresholdSec} from '../../tracker/liveness.js'
import {realProbe} from '../../proc/process-probe.js'
import {EXIT} from '../../util/errors.js'

export default class TrackerDoctor extends HelixCommand {
  static override description = 'Check the tracker: malformed lines, duplicate ids, dangling refs, cycles, stale claims'
  static override flags = {
    repair: Flags.boolean({description: 'move malformed and superseded duplicate lines to beads.jsonl.rejected-<ts> and rewrite the rest'}),
    json: Flags.boolean({description: 'print the report as JSON'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(TrackerDoctor)
    const r = await doctorTracker(projectPaths(), {probe: realProbe(), thresholdSec: orphanThresholdSec(process.env), repair: flags.repair})
    process.stdout.write(flags.json ? JSON.stringify(r) + '\n' : doctorText(r))
    if (!r.ok) this.exit(EXIT.ERROR)
  }
}
