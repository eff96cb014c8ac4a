/**
 * What the run may select now: the selection options built from the run's skip
 * list, backoff and in-flight beads, and whether anything is selectable at all.
 * Shared by the scheduler, the drain (is the queue really empty?) and a
 * completed attempt (has the queue drained at max cycles?).
 */
import type {TrackerSnapshot} from '../tracker/types.js'
import {selectableBeads} from './selection.js'
import type {Scope} from './scope.js'

/** what the selection leaves out: the skip list, backoff, beads left out this round */
export type SelectableScope = Scope<{run: 'skip' | 'backoffUntil' | 'exclude' | 'now'}>

/** skip list plus children of skipped (blocked) epics */
function skipWithChildren(r: Pick<SelectableScope, 'skip'>, snap: TrackerSnapshot): Set<string> {
  const out = new Set(r.skip.keys())
  for (const b of snap.beads) if (b.parent && r.skip.has(b.parent)) out.add(b.id)
  return out
}

/** beads left out of this selection: conflicts, beads in flight, and dependents of beads not yet landed */
function excluded(r: Pick<SelectableScope, 'exclude'>, snap: TrackerSnapshot, active: ReadonlySet<string>): Set<string> {
  const out = new Set(r.exclude)
  if (active.size === 0) return out
  for (const id of active) out.add(id)
  for (const b of snap.beads) if ((b.dependencies ?? []).some((d) => active.has(String(d.depends_on_id)))) out.add(b.id)
  return out
}

export function selectOptions(r: SelectableScope, snap: TrackerSnapshot, stale: Set<string>, active: ReadonlySet<string> = new Set()) {
  return {skip: skipWithChildren(r, snap), backoffUntil: r.backoffUntil, now: r.now(), staleClaims: stale, focusedEpic: null as string | null, exclude: excluded(r, snap, active)}
}

/** anything selectable or backing off; `snap` when the caller just read the tracker (one read per decision) */
export async function anySelectable(r: SelectableScope & Scope<{d: 'tracker'}>, fresh?: TrackerSnapshot): Promise<boolean> {
  const snap = fresh ?? (await r.d.tracker.read())
  const stale = await r.d.tracker.staleClaims(snap)
  const s = selectableBeads(snap, selectOptions(r, snap, stale))
  return s.selectable.length > 0 || s.waiting.length > 0
}
