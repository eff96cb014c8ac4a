/**
 * What reconciliation does with each attempt a dead run left behind (SPEC 18.2),
 * decided from the tracker alone, so `helix run`, `helix run --dry-run`,
 * `helix doctor` and `helix recover` all say the same thing:
 *
 * - `discard`: its commits are on the base already (helix died after the
 *   fast-forward), or it changed nothing: remove worktree and branch;
 * - `finish`: the bead is closed and its work is not on the base: run the rest
 *   of the attempt (gate, review, drift check, landing);
 * - `preserve`: the bead is open (or gone): keep the work on a preserved ref;
 * - `keep`: a `--land none` branch, kept on purpose.
 */
import {statusOf} from '../tracker/queries.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import type {LeftoverAttempt} from '../git/leftovers.js'
import {worktreeRel} from '../git/names.js'

export type ReconcileKind = 'discard' | 'finish' | 'preserve' | 'keep' | 'drop'

export interface ReconcileAction {
  kind: ReconcileKind
  l: LeftoverAttempt
  /** commits to land or keep (the uncommitted changes count as one) */
  commits: number
  /** why (a `--remote` leftover: what the remote said) */
  why?: string
}

/** What the remote says about a `--remote` run's leftover attempt (SPEC 20.2). */
export interface RemoteFacts {
  /** the bead is closed in the worktree's own tracker (the agent finished) */
  closedInWorktree: boolean
  /** the bead is closed (or gone) at the remote base tip */
  closedAtTip: boolean
  /**
   * the claim ref: `ours` (the run that made the attempt made it, or it expired and
   * nobody took it over), `taken` (another run holds it now), `none` (no claim ref)
   */
  claim: 'ours' | 'taken' | 'none'
}

/**
 * SPEC 20.2: a `--remote` leftover judged against the remote. `finish` lands it
 * without the agent; `drop` keeps the work on a pushed preserved ref and changes
 * nothing else (another host holds or landed the bead); `preserve` keeps the work,
 * releases the claim and counts the attempt (19.2 step 6).
 */
export function planRemoteLeftover(l: LeftoverAttempt, f: RemoteFacts): ReconcileAction {
  const commits = l.ahead + (l.dirty ? 1 : 0)
  if (f.closedAtTip) return {kind: commits === 0 ? 'discard' : 'drop', l, commits, why: 'the bead is closed at the remote tip'}
  if (f.claim === 'taken') return {kind: commits === 0 ? 'discard' : 'drop', l, commits, why: 'another run took its claim over'}
  if (commits === 0) return {kind: 'preserve', l, commits, why: 'no work in it'}
  if (f.closedInWorktree && f.claim === 'ours') return {kind: 'finish', l, commits}
  return {kind: 'preserve', l, commits, why: f.closedInWorktree ? 'its claim is gone' : 'the bead is not closed'}
}

export function planReconcile(snap: TrackerSnapshot, items: readonly LeftoverAttempt[]): ReconcileAction[] {
  return items.map((l) => {
    const commits = l.ahead + (l.dirty ? 1 : 0)
    const bead = snap.byId.get(l.bead)
    if (l.meta?.kept === true && bead && statusOf(bead) === 'closed' && !l.worktree) return {kind: 'keep', l, commits}
    if (commits === 0) return {kind: 'discard', l, commits}
    if (bead && statusOf(bead) === 'closed') return {kind: l.meta?.kept === true ? 'keep' : 'finish', l, commits}
    return {kind: 'preserve', l, commits}
  })
}

const where = (l: LeftoverAttempt): string => (l.worktree ? worktreeRel(l.bead, l.attempt) : `branch ${l.branch ?? '?'}`)
const plural = (n: number): string => `${n} commit${n === 1 ? '' : 's'}`

/** one line per action, for `--dry-run` and `doctor` (`would …`) */
export function planLine(a: ReconcileAction, base: string): string {
  const id = sanitize(a.l.bead)
  const n = a.l.attempt
  switch (a.kind) {
    case 'discard':
      return `helix: would remove ${sanitize(where(a.l))} of ${id} attempt ${n}: ${a.l.tip ? `its work is already on ${sanitize(base)}` : 'no work in it'}`
    case 'finish':
      return `helix: would resume ${id} attempt ${n}: closed, ${plural(a.commits)} not on ${sanitize(base)} to land`
    case 'preserve':
      return `helix: would keep ${id} attempt ${n} (${plural(a.commits)}) on refs/helix/preserved/${id}/… and remove ${sanitize(where(a.l))}: the bead is not closed`
    case 'keep':
      return `helix: would leave branch ${sanitize(a.l.branch ?? '?')} alone (kept by --land none)`
    case 'drop':
      return `helix: would keep ${id} attempt ${n} (${plural(a.commits)}) on refs/helix/preserved/${id}/… and remove ${sanitize(where(a.l))}: ${sanitize(a.why ?? 'another run holds the bead')}`
    default: {
      const never: never = a.kind
      return String(never)
    }
  }
}
