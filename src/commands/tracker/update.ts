import os from 'node:os'
import {Args, Flags} from '@oclif/core'
import {HelixCommand} from '../../util/base-command.js'
import {projectPaths} from '../../util/root.js'
import {parseSetPairs, updateBeadDetailed} from '../../tracker/ops.js'
import {serializeBead} from '../../tracker/codec.js'
import {sanitize} from '../../util/sanitize.js'
import {orphanThresholdSec} from '../../tracker/liveness.js'
import {realProbe, startTokenOf} from '../../recovery/probe.js'

const multi = {multiple: true, multipleNonGreedy: true} as const

export default class TrackerUpdate extends HelixCommand {
  static override description = 'Change a bead (status changes only through --status, --claim, --unclaim)'
  static override args = {id: Args.string({required: true, description: 'bead id'})}
  static override flags = {
    title: Flags.string({}),
    status: Flags.string({description: 'open, in_progress, closed, blocked, proposed, cancelled'}),
    priority: Flags.string({description: '0-4'}),
    labels: Flags.string({description: 'replace labels (comma-separated)'}),
    'add-label': Flags.string({...multi}),
    'remove-label': Flags.string({...multi}),
    parent: Flags.string({}),
    description: Flags.string({}),
    acceptance: Flags.string({}),
    notes: Flags.string({description: 'replace notes'}),
    'append-notes': Flags.string({description: 'append to notes after a blank line'}),
    'spec-id': Flags.string({}),
    design: Flags.string({}),
    'execution-eligible': Flags.string({options: ['true', 'false']}),
    'superseded-by': Flags.string({}),
    replaces: Flags.string({}),
    assignee: Flags.string({description: 'owner (also the claimer with --claim)'}),
    set: Flags.string({...multi, description: 'key=value (repeatable)'}),
    unset: Flags.string({...multi, description: 'remove a key (repeatable)'}),
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
    const {bead, notice} = await updateBeadDetailed(projectPaths(), args.id, {
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
    if (notice !== undefined) {
      this.err(`helix: ${sanitize(notice)}`)
      if (flags.json) this.out(serializeBead(bead))
      return
    }
    this.out(flags.json ? serializeBead(bead) : `updated ${sanitize(bead.id)}`)
  }
}
