import os from 'node:os'
import {Args, Flags} from '@oclif/core'
import {HelixCommand} from '../../util/base-command.js'
import {projectPaths} from '../../util/root.js'
import {parseSetPairs, updateBead} from '../../tracker/ops.js'
import {serializeBead} from '../../tracker/codec.js'
import {orphanThresholdSec} from '../../tracker/liveness.js'
import {realProbe, startTokenOf} from '../../recovery/probe.js'

const multi = {multiple: true, multipleNonGreedy: true} as const

export default class TrackerUpdate extends HelixCommand {
  static override description = 'Change a bead (status changes only through --status, --claim, --unclaim)'
  static override args = {id: Args.string({required: true, description: 'bead id'})}
  static override flags = {
    title: Flags.string({description: 'new title (default: unchanged)'}),
    status: Flags.string({description: 'open, in_progress, closed, blocked, proposed, cancelled (default: unchanged)'}),
    priority: Flags.string({description: '0-4 (default: unchanged)'}),
    labels: Flags.string({description: 'replace labels (comma-separated) (default: unchanged)'}),
    'add-label': Flags.string({...multi, description: 'add a label (repeatable) (default: none)'}),
    'remove-label': Flags.string({...multi, description: 'remove a label (repeatable) (default: none)'}),
    parent: Flags.string({description: 'parent epic id; empty removes it (default: unchanged)'}),
    description: Flags.string({description: 'replace the description (default: unchanged)'}),
    acceptance: Flags.string({description: 'replace the acceptance criteria (default: unchanged)'}),
    notes: Flags.string({description: 'replace notes (default: unchanged)'}),
    'append-notes': Flags.string({description: 'append to notes after a blank line (default: none)'}),
    'spec-id': Flags.string({description: 'governing spec id (default: unchanged)'}),
    design: Flags.string({description: 'replace the design notes (default: unchanged)'}),
    'execution-eligible': Flags.string({options: ['true', 'false'], description: 'false keeps the bead out of ready (default: unchanged)'}),
    'superseded-by': Flags.string({description: 'id of the bead that replaces this one (default: unchanged)'}),
    replaces: Flags.string({description: 'id of the bead this one replaces (default: unchanged)'}),
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
    // this process exits at once, its caller (agent shell, script) lives on.
    const claimPid = process.ppid > 1 ? process.ppid : process.pid
    const bead = await updateBead(projectPaths(), args.id, {
      title: flags.title,
      status: flags.status,
      priority: flags.priority,
      labels: flags.labels,
      addLabels: flags['add-label'],
      removeLabels: flags['remove-label'],
      parent: flags.parent,
      description: flags.description,
      acceptance: flags.acceptance,
      notes: flags.notes,
      appendNotes: flags['append-notes'],
      specId: flags['spec-id'],
      design: flags.design,
      executionEligible: flags['execution-eligible'],
      supersededBy: flags['superseded-by'],
      replaces: flags.replaces,
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
            startToken: startTokenOf(claimPid),
            machine: os.hostname(),
            probe: realProbe(),
            thresholdSec: orphanThresholdSec(env),
          }
        : undefined,
    })
    this.out(flags.json ? serializeBead(bead) : `updated ${bead.id}`)
  }
}
