/**
 * An implementation agent closes only its own bead (and its batch's, SPEC 5.4).
 * A bead that was open and unclaimed when the attempt was claimed, and is closed
 * when its agent is done, was closed by nobody helix asked: the agent (through
 * `helix tracker close`, `update --status closed`, or an edit of beads.jsonl), or
 * someone by hand meanwhile. Its close has no attempt, no review and no landing
 * behind it, so left alone it reads as done work that no run did. helix reopens it
 * with a note saying why, and says so in one line (docs/decisions.md, session 35).
 *
 * A bead that was in the tracker at the claim and is gone after the agent (helix
 * deletes no bead; the agent or a person edited the file) is said in one line too,
 * so it is not lost silently; helix does not write it back (SPEC 13.4 stops the run
 * only when more than half went).
 *
 * Not counted as foreign: the target, its batch, beads created during the attempt,
 * beads this run's other attempts hold or closed, and epics (helix closes an epic
 * whose children are done). With `--remote` and `--sandbox` the agent edits its own
 * tracker copy: the remote landing does not carry such a close to the base
 * (`applyAttemptEdits` in remote/attempt-tracker.ts), the sandbox carries no edit of
 * another bead; so this runs only in the checkout and local worktrees.
 */
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {AttemptCtx} from './attempt-state.js'
import type {Scope} from './scope.js'
import {statusOf} from './selection.js'

export type ForeignScope = Scope<{d: 'tracker' | 'out'; ledger: 'state'; run: 'inFlight' | 'log' | 'now'}>

/**
 * What an attempt claimed at `snap` keeps to check its agent's closes and deletions against
 * after the call: nothing where the agent edits a copy (`alwaysWorktree`: --remote, --sandbox).
 */
export function trackedAtClaim(alwaysWorktree: boolean, snap: TrackerSnapshot, target: string, batch: readonly string[]): {openBefore: Set<string>; idsBefore: string[]} {
  if (alwaysWorktree) return {openBefore: new Set(), idsBefore: []}
  return {openBefore: closableByNobody(snap, target, batch), idsBefore: snap.beads.map((b) => b.id)}
}

/** ids of the beads an attempt claimed at `snap` could close without being asked: open, unclaimed, not epics */
function closableByNobody(snap: TrackerSnapshot, target: string, batch: readonly string[]): Set<string> {
  const out = new Set<string>()
  for (const b of snap.beads) {
    if (b.id === target || batch.includes(b.id)) continue
    if (statusOf(b) === 'open' && b['claim-token'] === undefined && b.issue_type !== 'epic') out.add(b.id)
  }
  return out
}

/** the beads of `a.openBefore` closed in `after` that no attempt of this run closed */
export function foreignCloses(after: TrackerSnapshot, openBefore: ReadonlySet<string>, ours: ReadonlySet<string>): Bead[] {
  const out: Bead[] = []
  for (const id of openBefore) {
    if (ours.has(id)) continue
    const b = after.byId.get(id)
    if (b && statusOf(b) === 'closed') out.push(b)
  }
  return out
}

/** ids of `before` (other than the target) that `after` no longer holds */
export function vanished(before: readonly string[], after: TrackerSnapshot, target: string): string[] {
  return before.filter((id) => id !== target && !after.byId.has(id))
}

/** reopen what the attempt's agent closed of other beads, and name the beads that went; returns the ids reopened */
export async function reopenForeignCloses(r: ForeignScope, a: AttemptCtx, after: TrackerSnapshot): Promise<string[]> {
  const gone = vanished(a.idsBefore ?? [], after, a.target.id)
  if (gone.length > 0) {
    const shown = gone.slice(0, 5).map(sanitize).join(', ') + (gone.length > 5 ? ` and ${gone.length - 5} more` : '')
    r.d.out.both(`helix: ${shown} disappeared from the tracker during the attempt on ${sanitize(a.target.id)}; helix deletes no bead: restore ${gone.length === 1 ? 'it' : 'them'} from git or a backup of .ddx/beads.jsonl`)
    r.log?.event('beads disappeared', {attempt_on: a.target.id, beads: gone}, 'warn')
  }
  if (!a.openBefore || a.openBefore.size === 0) return []
  const ours = new Set<string>(r.ledger.state.closed_beads)
  for (const f of r.inFlight.values()) ours.add(f.id)
  const found = foreignCloses(after, a.openBefore, ours)
  const done: string[] = []
  for (const b of found) {
    const note = `REOPENED [${r.now().toISOString()}]: closed during the attempt on ${a.target.id} (cycle ${a.n}), which was not working on it; helix reopened it. Close it again by hand if its work is done.`
    try {
      await r.d.tracker.reopen(b.id, note)
      done.push(b.id)
    } catch (error) {
      // reopened meanwhile (a person), or the tracker would not take the write: said, not fatal
      r.log?.event('foreign close not reopened', {bead: b.id, attempt_on: a.target.id, error: errorMessage(error)}, 'warn')
    }
  }
  if (done.length > 0) {
    const ids = done.map(sanitize).join(', ')
    r.d.out.both(`helix: ${ids} ${done.length === 1 ? 'was' : 'were'} closed during the attempt on ${sanitize(a.target.id)}, which was not working on ${done.length === 1 ? 'it' : 'them'}; reopened (a close needs its own attempt; close by hand if the work is done)`)
    r.log?.event('foreign closes reopened', {attempt_on: a.target.id, beads: done})
  }
  return done
}
