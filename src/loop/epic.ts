/**
 * The focused epic's end: once it has no open children it is closed (not a
 * cycle), reviewed when auto-review is on, and the focus released.
 */
import type {TrackerSnapshot} from '../tracker/types.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {openChildIds} from './outcome.js'
import {review, type ReviewScope} from './review.js'
import {statusOf} from './selection.js'
import {Stop, type Step} from './stop.js'
import type {Scope} from './scope.js'

/** closing the focused epic: the tracker, the focus, and its review */
export type EpicScope = ReviewScope & Scope<{d: 'out' | 'tracker'; o: 'autoReview'; ledger: 'focus' | 'closed' | 'save'; run: 'focusedEpic' | 'skip'}>

/** Focused epic with no open children left: close it (not a cycle), review, release. */
export async function maybeCloseFocusedEpic(r: EpicScope, snap: TrackerSnapshot): Promise<Step | 'none'> {
  const epicId = r.focusedEpic
  if (!epicId) return 'none'
  const epic = snap.byId.get(epicId)
  if (!epic || statusOf(epic) === 'closed' || r.skip.has(epicId)) {
    r.ledger.focus(null)
    return 'none'
  }
  if (openChildIds(snap, epicId).size > 0) return 'none'
  // both modes: the epic's own review follows, and without this line it reads as a second review of the last child
  r.d.out.both(`helix: epic ${sanitize(epicId)} complete — closing`)
  try {
    await r.d.tracker.close(epicId)
    r.ledger.closed(epicId)
  } catch (error) {
    r.d.out.normal(`helix: could not close epic ${sanitize(epicId)}: ${sanitize(errorMessage(error))}`)
  }
  r.ledger.focus(null)
  await r.ledger.save()
  if (r.o.autoReview) {
    const step = await review(r, epicId)
    if (step instanceof Stop) return step
  }
  return 'continue'
}
