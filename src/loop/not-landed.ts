/**
 * SPEC 18.1a: every end of a `--workers` attempt that is not a landing undoes the
 * agent's close. The note is `NOT LANDED [<ts>]: <why>; work kept at <ref>`. When
 * the reopen cannot be written (tracker locked, disk full) it is owed: recorded
 * beside the run state and finished at the next start (reconcile.ts).
 */
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {OweReopen} from './ports.js'
import {statusOf} from './selection.js'
import type {Scope} from './scope.js'

/** reopening a bead NOT LANDED: the tracker, the landing port's record of an owed reopen, the ledger's reopen mark */
export type ReopenScope = Scope<{d: 'tracker' | 'landing' | 'out'; ledger: 'reopened'; run: 'log' | 'now'}>

export function notLandedNote(at: Date, why: string, ref: string | null): string {
  return `NOT LANDED [${at.toISOString()}]: ${why}${ref ? `; work kept at ${ref}` : ''}`
}

/** reopen `id` with a NOT LANDED note; never throws (an unwritable reopen is recorded as owed) */
export async function reopenNotLanded(r: ReopenScope, id: string, why: string, ref: string | null): Promise<boolean> {
  const note = notLandedNote(r.now(), why, ref)
  r.ledger.reopened(id)
  try {
    await r.d.tracker.reopen(id, note)
    r.log?.event('reopened not landed', {bead: id, reason: why, ref})
    await forgetOwed(r, id)
    return true
  } catch (error) {
    const msg = errorMessage(error)
    r.log?.event('reopen failed', {bead: id, error: msg}, 'error')
    try {
      await r.d.landing?.pending?.add({bead: id, note, at: r.now().toISOString()})
      r.d.out.both(`helix: could not reopen ${sanitize(id)} (${sanitize(msg.replace(/^helix: /, ''))}); the next run reopens it`)
    } catch (error2) {
      r.d.out.both(`helix: could not reopen ${sanitize(id)} nor record it (${sanitize(errorMessage(error2))}); 'helix doctor' will list it`)
    }
    return false
  }
}

/** after an attempt that did not land: reopen its bead when the agent had closed it */
export async function reopenIfClosed(r: ReopenScope, id: string, why: string, ref: string | null): Promise<void> {
  let closed: boolean
  try {
    const b = (await r.d.tracker.read()).byId.get(id)
    closed = b !== undefined && statusOf(b) === 'closed'
  } catch {
    // unreadable now: assume the worst, the reopen (or its record) decides
    closed = true
  }
  if (closed) await reopenNotLanded(r, id, why, ref)
  else await forgetOwed(r, id)
}

/** the reopen recorded ahead (`owe`) is paid or not owed: drop its record (best effort; a stale one reopens only a closed bead) */
async function forgetOwed(r: Scope<{d: 'landing'; run: 'log'}>, id: string): Promise<void> {
  try {
    await r.d.landing?.pending?.remove(id)
  } catch (error) {
    r.log?.event('owed reopen not cleared', {bead: id, error: errorMessage(error)}, 'error')
  }
}

/**
 * SPEC 18.1a across a crash (ports.ts `OweReopen`): before an attempt's worktree and branch
 * go, a bead the agent closed gets its reopen recorded as owed, so a run killed before the
 * reopen below leaves it to the next start (reconcile.ts pays it; reopenNotLanded clears it).
 */
export function oweReopen(r: Scope<{d: 'tracker' | 'landing'; run: 'log' | 'now'}>, id: string): OweReopen {
  return async (ref, why) => {
    const pending = r.d.landing?.pending
    if (!pending) return
    try {
      const b = (await r.d.tracker.read()).byId.get(id)
      if (b === undefined || statusOf(b) !== 'closed') return
      await pending.add({bead: id, note: notLandedNote(r.now(), why, ref), at: r.now().toISOString()})
    } catch (error) {
      r.log?.event('owed reopen not recorded', {bead: id, error: errorMessage(error)}, 'error')
    }
  }
}
