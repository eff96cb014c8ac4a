/**
 * The scheduler (SPEC 5.2, 15.3): N slots (one with `--workers 1`), the
 * selection for a free slot, and the drain decision. `decideDrain` is pure; the
 * loop around it starts attempts, waits for the first to end, and runs the drain
 * or periodic alignment only when every slot is idle.
 */
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {periodicAlignment, review} from './after.js'
import {runAttempt} from './attempt.js'
import {buildOnce} from './build-once.js'
import {checkBudget} from './dispatch.js'
import {drain} from './drain.js'
import {openChildIds} from './outcome.js'
import {selectTarget, selectableBeads, statusOf, type Selection} from './selection.js'
import {Stop, StopNow, interruptStop, type Step} from './stop.js'
import type {Run} from './supervisor.js'

export type Decision =
  | {kind: 'start'}
  | {kind: 'wait'}
  | {kind: 'align'}
  | {kind: 'backoff'; until: string}
  | {kind: 'retry'}
  | {kind: 'drain'}

export interface DrainInput {
  /** a selectable target exists */
  target: boolean
  freeSlots: number
  busySlots: number
  /** no new attempt may start (a stop is pending, a quota pause, max cycles) */
  holding: boolean
  /** backing-off beads, earliest first */
  waiting: ReadonlyArray<{until: string}>
  excluded: number
  idleSpins: number
  alignDue: boolean
}

/** What the scheduler does next. Drain, alignment and backoff waits only when every slot is idle. */
export function decideDrain(i: DrainInput): Decision {
  if (!i.holding && i.freeSlots > 0 && i.target) return {kind: 'start'}
  if (i.busySlots > 0) return {kind: 'wait'}
  if (i.alignDue) return {kind: 'align'}
  if (i.waiting.length > 0) return {kind: 'backoff', until: (i.waiting[0] as {until: string}).until}
  if (i.excluded > 0 && i.idleSpins < 3) return {kind: 'retry'}
  return {kind: 'drain'}
}

/** skip list plus children of skipped (blocked) epics */
function skipWithChildren(r: Run, snap: TrackerSnapshot): Set<string> {
  const out = new Set(r.skip.keys())
  for (const b of snap.beads) if (b.parent && r.skip.has(b.parent)) out.add(b.id)
  return out
}

/** beads left out of this selection: conflicts, beads in flight, and dependents of beads not yet landed */
function excluded(r: Run, snap: TrackerSnapshot, active: ReadonlySet<string>): Set<string> {
  const out = new Set(r.exclude)
  if (active.size === 0) return out
  for (const id of active) out.add(id)
  for (const b of snap.beads) if ((b.dependencies ?? []).some((d) => active.has(String(d.depends_on_id)))) out.add(b.id)
  return out
}

export function selectOptions(r: Run, snap: TrackerSnapshot, stale: Set<string>, active: ReadonlySet<string> = new Set()) {
  return {skip: skipWithChildren(r, snap), backoffUntil: r.backoffUntil, now: r.now(), staleClaims: stale, focusedEpic: null as string | null, exclude: excluded(r, snap, active)}
}

async function select(r: Run, snap: TrackerSnapshot, active: ReadonlySet<string>): Promise<Selection> {
  const sel = await selectFor(r, snap, active)
  // `R ready` does not count beads another slot is on (their claim may not be written yet)
  return active.size === 0 ? sel : {...sel, ready: sel.ready.filter((b) => !active.has(b.id))}
}

async function selectFor(r: Run, snap: TrackerSnapshot, active: ReadonlySet<string>): Promise<Selection> {
  const stale = await r.d.tracker.staleClaims(snap)
  const base = selectOptions(r, snap, stale, active)
  if (r.focusedEpic) {
    const sel = selectTarget(snap, {...base, focusedEpic: r.focusedEpic})
    if (sel.target) return sel
    if (active.size === 0) {
      r.d.out.normal(`helix: releasing focus on epic ${sanitize(r.focusedEpic)} (no ready children)`)
      r.focusedEpic = null
    }
  }
  const sel = selectTarget(snap, base)
  if (sel.epicFocus && (r.skip.has(sel.epicFocus) || active.size > 0)) return {...sel, epicFocus: undefined}
  return sel
}

/** anything selectable or backing off; `snap` when the caller just read the tracker (one read per decision) */
export async function anySelectable(r: Run, fresh?: TrackerSnapshot): Promise<boolean> {
  const snap = fresh ?? (await r.d.tracker.read())
  const stale = await r.d.tracker.staleClaims(snap)
  const s = selectableBeads(snap, selectOptions(r, snap, stale))
  return s.selectable.length > 0 || s.waiting.length > 0
}

/** Focused epic with no open children left: close it (not a cycle), review, release. */
export async function maybeCloseFocusedEpic(r: Run, snap: TrackerSnapshot): Promise<Step | 'none'> {
  const epicId = r.focusedEpic
  if (!epicId) return 'none'
  const epic = snap.byId.get(epicId)
  if (!epic || statusOf(epic) === 'closed' || r.skip.has(epicId)) {
    r.focusedEpic = null
    return 'none'
  }
  if (openChildIds(snap, epicId).size > 0) return 'none'
  r.d.out.normal(`helix: epic ${sanitize(epicId)} complete — closing`)
  try {
    await r.d.tracker.close(epicId)
    r.ledger.closed(epicId)
  } catch (error) {
    r.d.out.normal(`helix: could not close epic ${sanitize(epicId)}: ${sanitize(errorMessage(error))}`)
  }
  r.focusedEpic = null
  await r.ledger.save()
  if (r.o.autoReview) {
    const step = await review(r, epicId)
    if (step instanceof Stop) return step
  }
  return 'continue'
}

async function waitBackoff(r: Run, until: string): Promise<Step> {
  const ms = Math.max(0, Date.parse(until) - r.now().getTime())
  r.d.out.normal(`helix: only backing-off issues remain; waiting ${Math.ceil(ms / 1000)}s`)
  await r.ledger.save('backoff')
  const t0 = r.now().getTime()
  await r.d.sleep(ms, r.o.signal)
  r.idleMs += Math.max(0, r.now().getTime() - t0)
  if (r.aborted) return interruptStop(r.o.signal)
  return 'continue'
}

interface SlotEnd {
  slot: number
  bead: string
  step: Step
}

/** The run's main loop: start attempts in free slots, wait for one to end, drain when idle. */
export async function runScheduler(r: Run): Promise<Stop> {
  if (r.o.once) return buildOnce(r)
  const running = new Map<number, Promise<SlotEnd>>()
  const active = new Map<number, string>()
  let stopping: Stop | null = null
  const start = (slot: number, snap: TrackerSnapshot, sel: Selection) => {
    const bead = (sel.target as Bead).id
    active.set(slot, bead)
    running.set(
      slot,
      runAttempt(r, slot, snap, sel).then(
        (step): SlotEnd => ({slot, bead, step}),
        (error: unknown): SlotEnd => ({slot, bead, step: error instanceof StopNow ? error.stop : r.errorStop(error)}),
      ),
    )
  }
  for (;;) {
    if (r.aborted && !stopping) stopping = interruptStop(r.o.signal)
    if (!stopping) {
      try {
        checkBudget(r)
      } catch (error) {
        if (!(error instanceof StopNow)) throw error
        stopping = error.stop
      }
    }
    let decision: Decision = {kind: 'wait'}
    if (!stopping) {
      const snap = await r.d.tracker.read()
      if (running.size === 0) {
        const closed = await maybeCloseFocusedEpic(r, snap)
        if (closed instanceof Stop) return closed
        if (closed === 'continue') continue
      }
      const activeIds = new Set(active.values())
      const sel = await select(r, snap, activeIds)
      const free = [...Array(r.workers).keys()].map((i) => i + 1).find((s) => !running.has(s))
      decision = decideDrain({
        target: sel.target !== null,
        freeSlots: r.workers - running.size,
        busySlots: running.size,
        // a pause holds every slot; and no more attempts than completed cycles still allowed
        holding: r.pausing || (r.o.maxCycles > 0 && r.ledger.state.completed_cycles + running.size >= r.o.maxCycles),
        // h4 (SPEC 19): beads another host holds are waited for, not drained past
        waiting: r.d.remoteWaiting ? [...sel.waiting, ...r.d.remoteWaiting()].sort((x, y) => x.until.localeCompare(y.until)) : sel.waiting,
        excluded: r.exclude.size,
        idleSpins: r.idleSpins,
        alignDue: r.alignDue !== null,
      })
      if (decision.kind === 'start' && free !== undefined) {
        start(free, snap, sel)
        // with one slot the attempt runs to its end before the next selection
        if (r.workers > 1 && running.size < r.workers) continue
        decision = {kind: 'wait'}
      }
    } else if (running.size === 0) {
      return stopping
    }
    switch (decision.kind) {
      case 'start':
      case 'wait': {
        if (running.size === 0) continue
        const end = await Promise.race(running.values())
        running.delete(end.slot)
        active.delete(end.slot)
        if (end.step instanceof Stop && !stopping) stopping = end.step
        break
      }
      case 'align': {
        const c = r.alignDue as number
        r.alignDue = null
        const step = await periodicAlignment(r, c)
        if (step instanceof Stop) return step
        break
      }
      case 'backoff': {
        const step = await waitBackoff(r, decision.until)
        if (step instanceof Stop) return step
        break
      }
      case 'retry':
        r.idleSpins++
        r.exclude.clear()
        break
      case 'drain': {
        const step = await drain(r)
        if (step instanceof Stop) return step
        break
      }
      default: {
        const never: never = decision
        throw new Error(`unhandled decision ${JSON.stringify(never)}`)
      }
    }
  }
}
