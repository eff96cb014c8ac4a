/**
 * The acceptance gate after a completed attempt (SPEC 5.6): run the project's
 * acceptance scripts and file one de-duplicated tracker bead per failing script.
 */
import type {Bead} from '../tracker/types.js'
import {statusOf} from './selection.js'
import type {Scope} from './scope.js'

/** the acceptance scripts, the failure beads they file and the ledger's record of them */
export type AcceptanceScope = Scope<{d: 'gates' | 'tracker' | 'out'; ledger: 'supervisory' | 'save'; run: 'log' | 'now'}>

export async function acceptanceGate(r: AcceptanceScope, n: number, id: string, worktree?: string): Promise<void> {
  const scripts = await r.d.gates.acceptanceScripts()
  if (scripts.length === 0) return
  const failures: string[] = []
  for (const s of scripts) {
    const rc = await r.d.gates.runScript(s, worktree)
    r.log?.event('acceptance script', {script: s, rc})
    if (rc !== 0) failures.push(s)
  }
  if (failures.length === 0) return
  const snap = await r.d.tracker.read()
  const target = snap.byId.get(id)
  const isOpen = (b: Bead) => statusOf(b) !== 'closed' && statusOf(b) !== 'cancelled'
  const isFailureBead = (b: Bead | undefined, name: string) => !!b && (b.labels ?? []).includes('acceptance-failure') && b['spec-id'] === name
  for (const s of failures) {
    const name = s.split('/').pop() as string
    const title = `Acceptance failure: ${name} after ${id}`
    // de-duplicate: an open bead with this title, or any open failure bead for the same script;
    // and never chain a new failure bead off a closed failure bead for the same script
    const exists = snap.beads.some((b) => isOpen(b) && (b.title === title || isFailureBead(b, name)))
    if (exists || isFailureBead(target, name)) continue
    const newId = await r.d.tracker.create({title, labels: ['helix', 'acceptance-failure'], 'spec-id': name, acceptance: `${name} passes cleanly`})
    r.ledger.supervisory({id: newId, type: 'acceptance-failure', triggering_cycle: n, triggering_bead: id, created_at: r.now().toISOString()})
  }
  r.d.out.normal(`helix: acceptance criteria not met after cycle ${n} — failures filed as tracker issues`)
  await r.ledger.save()
}
