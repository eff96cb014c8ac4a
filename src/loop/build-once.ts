/** `helix build [selector]` (SPEC 8): one implementation attempt, no queue drain. */
import {runAttempt} from './attempt.js'
import {maybeCloseFocusedEpic} from './epic.js'
import {selectOptions} from './selectable.js'
import {isEpicBead, selectTarget, selectableBeads, type Selection} from './selection.js'
import {Stop} from './stop.js'
import type {Run} from './run.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import {EXIT} from '../util/errors.js'

/** the first selectable bead a `helix build` selector names: id, then parent/spec-id/label, then title */
export function matchSelector(selectable: Bead[], selector: string): Bead | undefined {
  const needle = selector.toLowerCase()
  return (
    selectable.find((b) => b.id === selector) ??
    selectable.find((b) => b.parent === selector || b['spec-id'] === selector || (b.labels ?? []).includes(selector)) ??
    selectable.find((b) => (b.title ?? '').toLowerCase().includes(needle))
  )
}

export async function buildOnce(r: Run): Promise<Stop> {
  const snap: TrackerSnapshot = await r.d.tracker.read()
  const stale = await r.d.tracker.staleClaims(snap)
  const opts = selectOptions(r, snap, stale)
  const selector = r.o.once?.selector
  let sel: Selection
  if (selector) {
    const {ready, selectable} = selectableBeads(snap, opts)
    const match = matchSelector(selectable, selector)
    if (!match) return new Stop('error', `helix: no ready issue matches '${sanitize(selector)}'`)
    sel = {target: match, tier: null, batch: [], ready, waiting: []}
  } else {
    sel = selectTarget(snap, opts)
    if (!sel.target) return new Stop('completed', 'helix: no ready issues')
    sel = {...sel, epicFocus: undefined, batch: []}
  }
  const st = r.ledger.state
  const before = st.completed_cycles
  const attemptedBefore = st.attempted_cycles
  const step = await runAttempt(r, 1, snap, sel)
  if (step instanceof Stop) return step
  const target = sel.target as Bead
  if (st.attempted_cycles === attemptedBefore) {
    // claim conflict or change before claim: nothing was attempted
    return new Stop({reason: 'error', exit: EXIT.CLAIM}, `helix: could not claim ${sanitize(target.id)}`)
  }
  if (st.completed_cycles > before) {
    // the built bead may have been its epic's last open child: close the epic (not a cycle)
    const parent = target.parent
    const snapAfter = await r.d.tracker.read()
    const epic = parent ? snapAfter.byId.get(parent) : undefined
    if (epic && isEpicBead(epic) && !r.skip.has(epic.id)) {
      r.ledger.focus(epic.id)
      const closed = await maybeCloseFocusedEpic(r, snapAfter)
      r.ledger.focus(null)
      if (closed instanceof Stop) return closed
    }
    return new Stop('completed')
  }
  return new Stop('error', `helix: build did not complete ${sanitize(target.id)}`)
}
