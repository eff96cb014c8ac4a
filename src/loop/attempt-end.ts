/**
 * The end of an attempt: the bookkeeping of a completed or failed attempt
 * (counts, backoff, blocking, the systemic-failure check of SPEC 14.2), the
 * complete line, and `endCycle`, which every end of a cycle goes through.
 */
import type {DispatchResult} from '../agents/types.js'
import {sanitize} from '../util/sanitize.js'
import type {AttemptCtx, Completed} from './attempt-state.js'
import {blockIfOverBudget, hasBeadCaps, type BudgetScope} from './bead-budget.js'
import {BLOCK_AFTER_ATTEMPTS, backoffSeconds} from './backoff.js'
import {maybeCloseFocusedEpic, type EpicScope} from './epic.js'
import type {AttemptEndKind} from './systemic.js'
import {blockedReason, failureArrow, failureLineOf, fit, trackerLockLineOf, type FailedOutcome} from './wording.js'
import {periodicAlignment, type AlignmentScope} from './review.js'
import {anySelectable, type SelectableScope} from './selectable.js'
import {Stop, type Step} from './stop.js'
import type {Scope} from './scope.js'
import {groupDigits} from '../util/numbers.js'

/** the lines an attempt prints: the terminal, the clock and its slot's tag */
export type LineScope = Scope<{d: 'out'; ledger: 'state'; run: 't' | 'slotTag'}>
/** ending a cycle: the slot's worker entry and a save */
export type EndCycleScope = Scope<{ledger: 'endAttempt' | 'save'}>
/** blocking a bead: the skip list, its label and note, the line and the notification */
export type BlockScope = Scope<{d: 'out' | 'tracker'; ledger: 'skip'; run: 't' | 'now' | 'notify'}>
/** a completed attempt: the counts, the context file, a periodic alignment, the max-cycles end */
export type CompletedScope = EndCycleScope &
  AlignmentScope &
  EpicScope &
  SelectableScope &
  Scope<{d: 'context' | 'tracker'; o: 'reviewEvery' | 'once' | 'maxCycles'; ledger: 'completed' | 'state'; run: 'systemic' | 'contextMd' | 'focusedEpic' | 'workers' | 'alignDue'}>
/** a failed attempt: the systemic check, the counts, backoff or blocking, orphan recovery */
export type FailedScope = EndCycleScope &
  BlockScope &
  BudgetScope &
  Scope<{
    d: 'out' | 'tracker' | 'agents' | 'recoverOrphans' | 'env'
    o: 'timeoutSec' | 'stallTimeoutSec'
    ledger: 'state' | 'failedAttempt' | 'clearBackoff' | 'focus' | 'attemptsOf' | 'backoff' | 'save'
    run: 't' | 'slotTag' | 'now' | 'log' | 'notify' | 'systemic' | 'focusedEpic'
  }>
/** the attempt as its lines name it */
type Named = Pick<AttemptCtx, 'slot' | 'n' | 'target'>

export const DRIFT_REASON = 'queue drift: upstream governance fields changed during execution'

export async function completedAttempt(r: CompletedScope, a: AttemptCtx, _outcome: 'COMPLETE' | 'SALVAGED'): Promise<Step> {
  r.systemic.record({bead: a.target.id, kind: 'ok', line: null, durationMs: 0})
  const c = r.ledger.completed()
  await endCycle(r, a)
  if (c % 5 === 0) r.contextMd = await r.d.context(await r.d.tracker.read(), r.focusedEpic, true)
  if (r.o.reviewEvery > 0 && c % r.o.reviewEvery === 0 && !r.o.once) {
    // with workers the scheduler runs it once every slot is idle
    if (r.workers > 1) r.alignDue = c
    else {
      const step = await periodicAlignment(r, c)
      if (step !== 'continue') return step
    }
  }
  if (r.o.maxCycles > 0 && c >= r.o.maxCycles) {
    // closing a finished epic is not a cycle: do it before stopping, or it would stay open
    // (an epic with children is never ready, so no later run would get back to it)
    const snap = await r.d.tracker.read()
    const closed = await maybeCloseFocusedEpic(r, snap)
    if (closed instanceof Stop) return closed
    // SPEC 16.3: no `reached max cycles` when the queue drained anyway
    // (with workers: only once no other slot is busy, since an in-flight attempt may still fail)
    if ((r.ledger.state.workers ?? []).length === 0 && !(await anySelectable(r, closed === 'none' ? snap : undefined))) return new Stop('max_cycles')
    return new Stop('max_cycles', `helix: reached max cycles (${r.o.maxCycles})`)
  }
  return 'continue'
}

function endKind(outcome: FailedOutcome): AttemptEndKind {
  switch (outcome) {
    case 'STALLED':
      return 'stall'
    case 'TIMEOUT':
      return 'timeout'
    case 'NOT_LANDED':
      return 'ok'
    case 'FAILED':
    case 'NOT_COMPLETED':
      return 'fail'
  }
}

export async function failedAttempt(r: FailedScope, a: AttemptCtx, res: DispatchResult, outcome: FailedOutcome, reason: string): Promise<Step> {
  const id = a.target.id
  const w = r.slotTag(a.slot)
  r.d.out.summary(`helix: [${r.t()}] ${w}cycle ${a.n}: ${sanitize(id)} ${failureArrow(outcome, reason, {timeoutSec: r.o.timeoutSec, stallTimeoutSec: r.o.stallTimeoutSec})}`)
  const kind = endKind(outcome)
  // a tracker-lock timeout in the agent's own tracker command says nothing about the agent: never systemic
  const line = trackerLockLineOf(res) ? null : kind === 'fail' ? failureLineOf(res) : reason
  const systemic = r.systemic.record({bead: id, kind, line, durationMs: res.durationMs})
  if (systemic) {
    // SPEC 14.2: the agent, not the bead — no attempt counted, no label, no note
    const why = sanitize(systemic)
    await endCycle(r, a)
    r.log?.event('systemic failure', {bead: id, line: systemic})
    void r.notify('agent_unavailable', {agent: r.d.agents.impl.name, reason: systemic})
    return new Stop('agent_unavailable', `helix: agent ${sanitize(r.d.agents.impl.name)} unavailable: ${why}`, why)
  }
  const st = r.ledger.state
  // a completed attempt that did not land is a non-completed attempt
  const bead: 'FAILED' | 'NOT_COMPLETED' = outcome === 'NOT_COMPLETED' || outcome === 'NOT_LANDED' ? 'NOT_COMPLETED' : 'FAILED'
  // "failed attempts" only when every attempt failed; a mix ending in non-completion is "non-completing"
  const {n, allFailed} = r.ledger.failedAttempt(id, bead)
  if (outcome === 'NOT_COMPLETED') r.d.out.normal(`helix: ${w}cycle ${a.n} did not complete a tracked issue; completed cycles remain ${st.completed_cycles}`)
  else if (outcome === 'NOT_LANDED') r.d.out.normal(`helix: [${r.t()}] ${w}cycle ${a.n}: ${sanitize(id)} not landed: ${reason}`)
  else r.d.out.normal(`helix: ${w}implementation failed during cycle ${a.n} (will not count toward completed cycles): ${fit(reason, 160)}`)
  await endCycle(r, a)
  await r.d.recoverOrphans((l) => r.d.out.normal(l))
  if (hasBeadCaps(r) && (await blockIfOverBudget(r, (await r.d.tracker.read()).byId.get(id)))) {
    // SPEC 14.6: the bead reached its budget; no backoff, no further attempt
  } else if (n >= BLOCK_AFTER_ATTEMPTS) {
    r.d.out.normal(`helix: blocking ${sanitize(id)} after ${n} ${allFailed ? 'failed' : 'non-completing'} attempts`)
    await block(r, id, blockedReason(n, allFailed, reason), n)
    r.ledger.clearBackoff(id)
    if (r.focusedEpic && a.target.parent === r.focusedEpic) {
      const epic = r.focusedEpic
      r.ledger.focus(null)
      await block(r, epic, `child ${id} intractable after ${n} attempts; last: ${fit(reason, 160)}`, r.ledger.attemptsOf(epic))
    }
  } else {
    const secs = backoffSeconds(n, r.d.env)
    r.ledger.backoff(id, new Date(r.now().getTime() + secs * 1000).toISOString())
    r.log?.event('backoff', {bead: id, attempts: n, seconds: secs})
  }
  await r.ledger.save('running')
  return 'continue'
}

/** skip list + label `blocked` added + note appended once */
export async function block(r: BlockScope, id: string, reason: string, attempts: number): Promise<void> {
  r.ledger.skip(id, reason, attempts)
  r.d.out.summary(`helix: [${r.t()}] BLOCKED ${sanitize(id)} after ${attempts} attempts`)
  const snap = await r.d.tracker.read()
  const b = snap.byId.get(id)
  void r.notify('bead_blocked', {bead: id, title: b?.title ?? '', reason, attempts})
  if (!b) return
  if (!(b.labels ?? []).includes('blocked')) await r.d.tracker.addLabel(id, 'blocked')
  const already = (b.notes ?? '').split('\n').some((line) => line.startsWith('BLOCKED [') && line.endsWith(`]: ${reason}`))
  if (!already) await r.d.tracker.appendNote(id, `BLOCKED [${r.now().toISOString()}]: ${reason}`)
}

export function completeLine(r: LineScope, a: Named, res: DispatchResult, outcome: Completed): void {
  const st = r.ledger.state
  const c = st.completed_cycles + 1
  const w = r.slotTag(a.slot)
  const id = sanitize(a.target.id)
  if (outcome === 'COMPLETE') r.d.out.both(`helix: [${r.t()}] ${w}cycle ${a.n}: ${id} → COMPLETE (${c} of ${st.attempted_cycles} cycles completed, ${groupDigits(st.total_tokens)} tokens)`)
  else r.d.out.both(`helix: [${r.t()}] ${w}cycle ${a.n}: ${id} → SALVAGED (agent rc=${res.rc} but issue closed)`)
}

export async function endCycle(r: EndCycleScope, a: Pick<AttemptCtx, 'slot'>): Promise<void> {
  r.ledger.endAttempt(a.slot)
  await r.ledger.save('running')
}
