import os from 'node:os'
import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {projectPaths} from '../../util/root.js'
import {parseSetPairs, updateBeadDetailed} from '../../tracker/ops.js'
import {serializeBead} from '../../tracker/codec.js'
import {inputFromFlags} from '../../tracker/fields.js'
import {tableFlags} from '../../cli/field-flags.js'
import {sanitize} from '../../util/sanitize.js'
import {orphanThresholdSec} from '../../tracker/liveness.js'
import {realProbe} from '../../proc/process-probe.js'

const multi = {multiple: true, multipleNonGreedy: true} as const

export default class TrackerUpdate extends HelixCommand {
  static override description = 'Change a bead (status changes only through --status, --claim, --unclaim)'
  static override args = {id: Args.string({required: true, description: 'bead id'})}
  static override flags = {
    // every plain field flag comes from the one field table (src/tracker/fields.ts)
    ...tableFlags('update'),
    labels: Flags.string({description: 'replace labels (comma-separated) (default: unchanged)'}),
    'add-label': Flags.string({...multi, description: 'add a label (repeatable) (default: none)'}),
    'remove-label': Flags.string({...multi, description: 'remove a label (repeatable) (default: none)'}),
    'append-notes': Flags.string({description: 'append to notes after a blank line (default: none)'}),
    assignee: Flags.string({description: 'owner (also the claimer with --claim) (default: unchanged; with --claim HELIX_OWNER or helix)'}),
    set: Flags.string({...multi, description: 'key=value (repeatable) (default: none)'}),
    unset: Flags.string({...multi, description: 'remove a key (repeatable) (default: none)'}),
    claim: Flags.boolean({description: 'claim (compare-and-set; exit 3 on conflict)'}),
    unclaim: Flags.boolean({description: 'release the claim (closed beads stay closed)'}),
    json: Flags.boolean({description: 'print the updated record'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TrackerUpdate)
    const env = process.env
    // The claimer of a CLI claim is the process that ran this command (our parent):
    // this process exits at once, its caller (agent shell, script) may too. So a hand
    // claim records no start token (SPEC 13.3 as amended): its pid proves nothing, and
    // it is judged by the age rule of 2.4, not given away the moment its shell exits.
    const claimPid = process.ppid > 1 ? process.ppid : process.pid
    const {bead, notice} = await updateBeadDetailed(projectPaths(), args.id, {
      ...inputFromFlags('update', flags),
      labels: flags.labels,
      addLabels: flags['add-label'],
      removeLabels: flags['remove-label'],
      appendNotes: flags['append-notes'],
      assignee: flags.assignee,
      set: parseSetPairs(flags.set),
      unset: flags.unset,
      unclaim: flags.unclaim,
      claimToken: env.HELIX_CLAIM_TOKEN,
      targetId: env.HELIX_BEAD_ID,
      claim: flags.claim
        ? {
            owner: flags.assignee ?? (env.HELIX_OWNER?.trim() || 'helix'),
            pid: claimPid,
            machine: os.hostname(),
            probe: realProbe(),
            thresholdSec: orphanThresholdSec(env),
          }
        : undefined,
    })
    if (notice !== undefined) {
      this.err(`helix: ${sanitize(notice)}`)
      if (flags.json) this.out(serializeBead(bead))
      return
    }
    this.out(flags.json ? serializeBead(bead) : `updated ${sanitize(bead.id)}`)
  }
}
