/**
 * The scheduler (SPEC 5.2, 15.3): N slots (one with `--workers 1`), the
 * selection for a free slot, and the drain decision. `decideDrain` is pure; the
 * loop around it starts attempts, waits for the first to end, and runs the drain
 * or periodic alignment only when every slot is idle.
 */
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import {runAttempt} from './attempt.js'
import {buildOnce} from './build-once.js'
import {budgetStop} from './dispatch.js'
import {drain} from './drain.js'
import {maybeCloseFocusedEpic} from './epic.js'
import {periodicAlignment} from './review.js'
import {selectOptions} from './selectable.js'
import {selectTarget, type Selection} from './selection.js'
import {Stop, interruptStop, type Step} from './stop.js'
import type {RunScope} from './scope.js'
import type {Waiting} from './ports.js'
import {MAX_SPINS, spins} from './drain-state.js'

export type Decision =
  | {kind: 'start'}
  | {kind: 'wait'}
  | {kind: 'align'}
  | {kind: 'backoff'; until: string; waiting: ReadonlyArray<Waiting>}
  | {kind: 'retry'}
  | {kind: 'drain'}

export interface DrainInput {
  /** a selectable target exists */
  target: boolean
  freeSlots: number
  busySlots: number
  /** no new attempt may start (a stop is pending, a quota pause, max cycles) */
  holding: boolean
  /** backing-off beads and what else is waited for (ports.ts Waiting), earliest first */
  waiting: ReadonlyArray<Waiting>
  excluded: number
  idleSpins: number
  alignDue: boolean
}

/** What the scheduler does next. Drain, alignment and backoff waits only when every slot is idle. */
export function decideDrain(i: DrainInput): Decision {
  if (!i.holding && i.freeSlots > 0 && i.target) return {kind: 'start'}
  if (i.busySlots > 0) return {kind: 'wait'}
  if (i.alignDue) return {kind: 'align'}
  if (i.waiting.length > 0) return {kind: 'backoff', until: (i.waiting[0] as Waiting).until, waiting: i.waiting}
  if (i.excluded > 0 && i.idleSpins < MAX_SPINS) return {kind: 'retry'}
  return {kind: 'drain'}
}

async function select(r: RunScope, snap: TrackerSnapshot, active: ReadonlySet<string>): Promise<Selection> {
  const sel = await selectFor(r, snap, active)
  // `R ready` does not count beads another slot is on (their claim may not be written yet)
  return active.size === 0 ? sel : {...sel, ready: sel.ready.filter((b) => !active.has(b.id))}
}

async function selectFor(r: RunScope, snap: TrackerSnapshot, active: ReadonlySet<string>): Promise<Selection> {
  const stale = await r.d.tracker.staleClaims(snap)
  const base = selectOptions(r, snap, stale, active)
  if (r.focusedEpic) {
    const sel = selectTarget(snap, {...base, focusedEpic: r.focusedEpic})
    if (sel.target) return sel
    if (active.size === 0) {
      r.d.out.normal(`helix: releasing focus on epic ${sanitize(r.focusedEpic)} (no ready children)`)
      r.ledger.focus(null)
    }
  }
  const sel = selectTarget(snap, base)
  if (sel.epicFocus && (r.skip.has(sel.epicFocus) || active.size > 0)) return {...sel, epicFocus: undefined}
  return sel
}

/**
 * The words of a wait: beads backing off alone are one line per wait (it ends when the
 * earliest is eligible). Anything else (another host's claim, a pull request, the remote)
 * is looked at again every few seconds: it is said once, and again only when what is
 * waited for changes; a part says when its wait ends where helix knows it. `said` is the
 * last such line.
 */
export function waitLine(waiting: ReadonlyArray<Waiting>, ms: number, said: string | null): string | null {
  const words = [...new Set(waiting.map((w) => w.what).filter((w): w is string => typeof w === 'string' && w !== ''))]
  if (words.length === 0) return `helix: only backing-off issues remain; waiting ${Math.ceil(ms / 1000)}s`
  const shown = words.length > 4 ? [...words.slice(0, 4), `${words.length - 4} more`] : words
  const line = `helix: waiting for ${shown.join('; ')}`
  return line === said ? null : line
}

async function waitBackoff(r: RunScope, until: string, waiting: ReadonlyArray<Waiting>, said: {line: string | null}): Promise<Step> {
  const ms = Math.max(0, Date.parse(until) - r.now().getTime())
  const line = waitLine(waiting, ms, said.line)
  if (line !== null) r.d.out.normal(line)
  said.line = line ?? said.line
  await r.ledger.save('backoff')
  const t0 = r.now().getTime()
  await r.d.sleep(ms, r.o.signal)
  r.ledger.idle(r.now().getTime() - t0)
  if (r.aborted) return interruptStop(r.o.signal)
  return 'continue'
}

interface SlotEnd {
  slot: number
  bead: string
  step: Step
}

/** The run's main loop: start attempts in free slots, wait for one to end, drain when idle. */
export async function runScheduler(r: RunScope): Promise<Stop> {
  if (r.o.once) return buildOnce(r)
  const running = new Map<number, Promise<SlotEnd>>()
  const active = new Map<number, string>()
  let stopping: Stop | null = null
  let rampedUp = 0
  // the last wait line said (a repeated wait for the same things is silent)
  const said: {line: string | null} = {line: null}
  const start = (slot: number, snap: TrackerSnapshot, sel: Selection) => {
    const bead = (sel.target as Bead).id
    active.set(slot, bead)
    running.set(
      slot,
      runAttempt(r, slot, snap, sel).then(
        (step): SlotEnd => ({slot, bead, step}),
        (error: unknown): SlotEnd => ({slot, bead, step: r.errorStop(error)}),
      ),
    )
  }
  for (;;) {
    try {
      if (r.aborted && !stopping) stopping = interruptStop(r.o.signal)
      if (!stopping) stopping = budgetStop(r)
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
          // SPEC 19: beads another host holds are waited for, not drained past
          waiting: r.d.remoteWaiting ? [...sel.waiting, ...r.d.remoteWaiting()].sort((x, y) => x.until.localeCompare(y.until)) : sel.waiting,
          excluded: r.exclude.size,
          idleSpins: spins(r.ledger.drain),
          alignDue: r.alignDue !== null,
        })
        if (decision.kind === 'start' && free !== undefined) {
          start(free, snap, sel)
          // with one slot the attempt runs to its end before the next selection
          if (r.workers > 1 && running.size < r.workers) {
            // the run's first attempts start a moment apart, so the slots do not finish, land and
            // start again in lockstep (decisions.md, "Session 29 (lead: the first attempts of a workers run start apart)")
            const spacing = r.o.startSpacingMs ?? 0
            if (spacing > 0 && ++rampedUp < r.workers) await r.d.sleep(spacing, r.o.signal)
            continue
          }
          decision = {kind: 'wait'}
        }
      } else if (running.size === 0) {
        return stopping
      }
      if (decision.kind !== 'backoff') said.line = null
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
          const step = await waitBackoff(r, decision.until, decision.waiting, said)
          if (step instanceof Stop) return step
          break
        }
        case 'retry':
          r.ledger.drainEvent({kind: 'spin'})
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
    } catch (error) {
      // an exception outside an attempt (a bug, a tracker that can't be read): start nothing more;
      // attempts in flight end their own way (land, or preserve and release), then the run stops
      const failed = r.errorStop(error)
      if (running.size === 0) return stopping ?? failed
      stopping ??= failed
    }
  }
}
