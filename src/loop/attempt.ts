/**
 * One attempt on one bead, as ONE explicit state machine:
 *
 *   selected → claimed → dispatched → classified → gated → reviewed → landed
 *   and, from the state named, the ends that are not a landing:
 *   selected → passed | unprepared;  claimed → stopped;  dispatched → paused | stopped;
 *   classified → failed | drifted | decomposed;  gated → stopped;  reviewed → failed | drifted | stopped
 *
 * `advance` moves one state to the next with an exhaustive switch; the stages only
 * decide. `runFrom` drives it and hands the terminal state to `settle()` (settle.ts),
 * the one place that releases the claim, frees the slot, ends the ledger's worker
 * entry and preserves the workspace. The states are data in attempt-state.ts.
 */
import {effectiveRc, killedForTime} from '../agents/judge.js'
import type {DispatchResult} from '../agents/types.js'
import type {CycleRecord} from '../state/types.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import {acceptanceGate, type AcceptanceScope} from './acceptance.js'
import {assertNever, isTerminal, type AttemptCtx, type AttemptState, type Terminal} from './attempt-state.js'
import {DRIFT_REASON, completeLine, type LineScope} from './attempt-end.js'
import {budgetStop, dispatch, type DispatchScope} from './dispatch.js'
import {blockIfOverBudget, recordBeadSpend, type BudgetScope, type SpendScope} from './bead-budget.js'
import {fingerprint, fingerprintDiff, sameFingerprint} from './fingerprint.js'
import {failureReason, titleSuffix, type FailedOutcome} from './wording.js'
import {land, type LandScope} from './land-step.js'
import {takeCheckTail} from './resolve-step.js'
import {classifyOutcome, openChildIds} from './outcome.js'
import type {Workspace} from './ports.js'
import {review, reviewWanted, type ReviewScope, type ReviewWantedScope} from './review.js'
import {readyList, statusOf, type Selection} from './selection.js'
import type {Scope} from './scope.js'
import {abandonWorkspace, settle, type SettleScope} from './settle.js'
import {Stop, interruptStop, type Step} from './stop.js'
import {errorMessage} from '../util/errors.js'
import {idProblem} from '../git/names.js'
import {reopenForeignCloses, trackedAtClaim, type ForeignScope} from './foreign-closes.js'

export type {AttemptCtx, AttemptState, Completed} from './attempt-state.js'

/** the claim: epic focus, the fresh read, the bead's budget, the claim, the worktree, the worker entry and the cycle's lines */
export type ClaimScope = BudgetScope &
  Scope<{
    d: 'tracker' | 'out' | 'context' | 'landing' | 'alwaysWorktree' | 'gates'
    o: 'timeoutSec' | 'autoReview' | 'reviewThreshold'
    ledger: 'focus' | 'skip' | 'attemptsOf' | 'save' | 'beginAttempt' | 'setWorker'
    run: 'focusedEpic' | 'contextMd' | 'workers' | 'exclude' | 'now' | 'inFlight' | 'slotTag' | 't'
  }>
/** the implementation call: the prompt (with earlier work and the land check's tail), the budget, the dispatch */
export type ImplementScope = DispatchScope & Scope<{d: 'landing' | 'agents' | 'trackerDir'; o: 'signal'; ledger: 'dispatched'; run: 'contextMd' | 'aborted'}>
/** the outcome: the re-read, the bead's spend, the classification, batch closes */
export type ClassifyScope = SpendScope & ForeignScope & Scope<{d: 'tracker'; ledger: 'closed'; run: 'log'}>
/** a cycle's record in the ledger */
export type RecordScope = Scope<{ledger: 'recordCycle'; run: 'now'}>
/** what the outcome means: on to the gate, or an end */
export type JudgeScope = RecordScope & LineScope & Scope<{d: 'out'; o: 'timeoutSec' | 'stallTimeoutSec'; ledger: 'closed' | 'clearBackoff'; run: 'inFlight' | 'log'}>
/** the acceptance gate and the post-implementation review */
export type GateScope = AcceptanceScope & ReviewWantedScope & ReviewScope & Scope<{o: 'autoReview'; ledger: 'implementationDone'}>
/**
 * One attempt from its selection to its end: every stage's scope together, and the
 * run is one. The attempt's own context (slot, claim token, workspace) is its
 * `AttemptCtx`, made at the claim and handed from state to state.
 */
export type AttemptScope = ClaimScope & ImplementScope & ClassifyScope & JudgeScope & GateScope & LandScope & SettleScope

/** One attempt from selection to its end; the step says whether the run goes on. */
export async function runAttempt(r: AttemptScope, slot: number, snap: TrackerSnapshot, sel: Selection): Promise<Step> {
  return runFrom(r, {kind: 'selected', slot, snap, sel})
}

/** Drive an attempt from any state to its end (a resumed attempt starts at `gated`, SPEC 18.2). */
export async function runFrom(r: AttemptScope, s0: AttemptState): Promise<Step> {
  let s = s0
  try {
    while (!isTerminal(s)) s = await advance(r, s)
    return await settle(r, s)
  } catch (error) {
    const why = errorMessage(error).split('\n')[0]
    await abandonWorkspace(r, s, `the run stopped (${String(why).replace(/^helix: /, '')})`)
    throw error
  }
}

export async function advance(r: AttemptScope, s: Exclude<AttemptState, Terminal>): Promise<AttemptState> {
  switch (s.kind) {
    case 'selected':
      return claim(r, s.slot, s.snap, s.sel)
    case 'claimed':
      return implement(r, s.a)
    case 'dispatched':
      return classify(r, s.a, s.res)
    case 'classified':
      return judge(r, s)
    case 'gated':
      return gate(r, s)
    case 'reviewed':
      return land(r, s.a, s.res, s.outcome)
    default:
      return assertNever(s)
  }
}

/** the acceptance gate and the post-implementation review of a completed attempt */
async function gate(r: GateScope, s: Extract<AttemptState, {kind: 'gated'}>): Promise<AttemptState> {
  r.ledger.implementationDone(s.a.slot)
  await acceptanceGate(r, s.a.n, s.a.target.id, s.a.ws?.dir)
  if (r.o.autoReview && (await reviewWanted(r, s.a.mark, s.a.ws))) {
    const step = await review(r, s.a.target.id, s.a.n, s.a.slot, s.a.ws?.dir)
    // one worker: the bead is closed and its work is in the checkout — the cycle did complete
    // (its COMPLETE line was printed); the run-complete line must count it
    if (step instanceof Stop) return {kind: 'stopped', a: s.a, step, why: 'review stopped the run', claim: {do: 'none'}, freeSlot: false, counted: !s.a.ws}
    s.a.review = 'a post-implementation review ran and let it land (anything it found is filed as beads)'
  }
  return {kind: 'reviewed', a: s.a, res: s.res, outcome: s.outcome}
}

async function claim(r: ClaimScope, slot: number, snap: TrackerSnapshot, sel: Selection): Promise<AttemptState> {
  const target = sel.target as Bead
  if (sel.epicFocus && sel.epicFocus !== r.focusedEpic) {
    r.ledger.focus(sel.epicFocus)
    r.d.out.normal(`helix: epic focus: ${sanitize(sel.epicFocus)} → child ${sanitize(target.id)}`)
    r.contextMd = await r.d.context(snap, r.focusedEpic, true)
  }
  // SPEC 18.3a: one bad bead never stops the run; an id that cannot name a branch is skipped, unclaimed
  const bad = r.workers > 1 && r.d.landing ? idProblem(target.id) : null
  if (bad) {
    r.ledger.skip(target.id, `its id cannot name a git branch or ref (${bad})`, r.ledger.attemptsOf(target.id))
    r.d.out.normal(`helix: skipping ${sanitize(target.id)}: its id cannot name a git branch (${bad})`)
    return {kind: 'passed', why: 'its id cannot name a git branch'}
  }
  const fp = fingerprint(target)
  const openChildrenBefore = openChildIds(snap, target.id)
  // revalidate on a fresh read: still ready, governance unchanged
  const fresh = await r.d.tracker.read()
  const freshBead = fresh.byId.get(target.id)
  const freshStale = await r.d.tracker.staleClaims(fresh)
  if (!freshBead || !readyList(fresh, freshStale).some((b) => b.id === target.id) || !sameFingerprint(fp, fingerprint(freshBead))) {
    r.d.out.normal(`helix: ${sanitize(target.id)} changed before claim; selecting again`)
    r.exclude.add(target.id)
    return {kind: 'passed', why: 'changed before claim'}
  }
  // SPEC 14.6: a bead at its budget is blocked, not dispatched again
  if (await blockIfOverBudget(r, freshBead)) {
    await r.ledger.save()
    return {kind: 'passed', why: 'at its budget'}
  }
  const c = await r.d.tracker.claim(target.id)
  if (!c.ok && c.blocked) {
    // nobody holds it and trying again changes nothing: skipped for the run, named in the blocker report
    r.ledger.skip(target.id, c.message, r.ledger.attemptsOf(target.id))
    r.d.out.normal(`helix: cannot claim ${sanitize(target.id)}: ${sanitize(c.message)}; skipping it this run`)
    return {kind: 'passed', why: 'cannot be claimed'}
  }
  if (!c.ok) {
    r.d.out.normal(`helix: claim conflict on ${sanitize(target.id)} (${sanitize(c.message)}); skipping it this iteration`)
    r.exclude.add(target.id)
    return {kind: 'passed', why: 'claim conflict'}
  }
  r.exclude.clear()
  const startedAt = r.now()
  const n = r.ledger.beginAttempt(slot, target.id, startedAt)
  r.inFlight.set(slot, {id: target.id, token: c.token})
  const attemptNo = r.ledger.attemptsOf(target.id) + 1
  let ws: Workspace | null = null
  // SPEC 19.2: --remote runs every attempt in a worktree, also with one slot
  if ((r.workers > 1 || r.d.alwaysWorktree) && r.d.landing) {
    try {
      ws = await r.d.landing.prepare(target.id, attemptNo, slot, {fingerprint: fp, claim_token: c.token})
    } catch (error) {
      // a worktree that cannot be made (a failing post-checkout hook, a full disk) fails this bead only (SPEC 18.3a)
      return {kind: 'unprepared', slot, id: target.id, token: c.token, why: sanitize(errorMessage(error).replace(/^helix: /, ''))}
    }
  }
  r.ledger.setWorker({
    slot,
    bead: target.id,
    title: sanitize(target.title ?? ''),
    attempt: ws?.attempt ?? attemptNo,
    started_at: startedAt.toISOString(),
    worktree: ws?.dir ?? null,
    branch: ws?.branch ?? null,
    pid: null,
    ...(r.o.timeoutSec ? {timeout_s: r.o.timeoutSec} : {}),
    last_output: null,
  })
  await r.ledger.save('implementing')
  const ready = sel.ready.length
  const batchIds = r.workers > 1 || ws ? [] : sel.batch.map((b) => b.id)
  const batchNote = batchIds.length > 0 ? `, batch=${batchIds.length + 1} issues (${[target.id, ...batchIds].map(sanitize).join(', ')})` : ''
  const w = r.slotTag(slot)
  const id = sanitize(target.id)
  r.d.out.normal(`helix: [${r.t()}] ${w}ready=${ready}, cycle=${n}, issue=${id}${batchNote}`)
  const head = `helix: [${r.t()}] ${w}cycle ${n}: ${id} (${ready} ready)`
  r.d.out.summary(head + titleSuffix(head, target.title))
  // the worktree marker only matters when a review may be sized by it
  const mark = r.o.autoReview && r.o.reviewThreshold > 0 && !ws ? await r.d.gates.mark() : null
  const headBefore = !ws && r.d.gates.head ? await r.d.gates.head() : null
  const a: AttemptCtx = {slot, n, target, ready, batchIds, fp, openChildrenBefore, ...trackedAtClaim(r.d.alwaysWorktree === true, fresh, target.id, batchIds), beadsBefore: fresh.beads.length, token: c.token, startedAt, mark, ws, headBefore}
  return {kind: 'claimed', a}
}

async function implement(r: ImplementScope, a: AttemptCtx): Promise<AttemptState> {
  let contextMd = r.contextMd
  if (a.ws && r.d.landing) {
    // a retry after NOT LANDED starts from the new base; the earlier work is named, not applied
    const ref = await r.d.landing.preservedRef(a.target.id)
    if (ref) contextMd += `\n\n## Earlier work on ${a.target.id}\n\nA previous attempt could not be landed; its commits are kept at \`${ref}\` (\`git log -p ${ref}\`). Reuse what still applies on the current base.\n`
    // SPEC 20.3: the last lines of the land check that kept the earlier work off the base
    contextMd += takeCheckTail(r, a.target.id)
  }
  const prompt = await r.d.agents.prompt('implementation', {beadId: a.target.id, ...(a.batchIds.length > 0 ? {batchIds: a.batchIds} : {}), contextMd, ...(a.ws ? {root: a.ws.dir} : {})})
  // SPEC 5.2 `attempted += 1; dispatch`: an attempt counts once its agent starts, not at the claim
  const over = budgetStop(r)
  if (over) return stopped(a, over, 'stopped')
  r.ledger.dispatched()
  const res = await dispatch(r, r.d.agents.impl, 'implementation', prompt, {
    beadId: a.target.id,
    claimToken: a.token,
    slot: a.slot,
    // SPEC 19.2: a --remote worktree's agent edits the worktree's own tracker copy (ws.trackerDir)
    ...(a.ws ? {cwd: a.ws.dir, env: (a.ws.trackerDir ?? r.d.trackerDir) ? {DDX_BEAD_DIR: (a.ws.trackerDir ?? r.d.trackerDir) as string} : {}} : {}),
  })
  if (r.aborted) return stopped(a, interruptStop(r.o.signal), 'interrupted')
  // the agent is unavailable: the bead is unclaimed when the run stops (its claim stays in flight until then)
  if (res instanceof Stop) return stopped(a, res, `the run stopped (${String(res.detail ?? res.cause.reason).replace(/^helix: /, '')})`)
  return {kind: 'dispatched', a, res}
}

/** the run stops with the attempt in flight: its claim is released when the run finishes */
function stopped(a: AttemptCtx, step: Step, why: string): Terminal {
  return {kind: 'stopped', a, step, why, claim: {do: 'keep'}, freeSlot: false, counted: false}
}

async function classify(r: ClassifyScope, a: AttemptCtx, res: DispatchResult): Promise<AttemptState> {
  const after = await r.d.tracker.read()
  const id = a.target.id
  const health = res.verdict.health
  // not the bead's fault: unclaim, no attempt counted, pause every slot's dispatch
  if (health.kind === 'quota') return {kind: 'paused', a, after, resetAt: health.resetAt, message: health.message}
  // SPEC 13.4: a tracker that lost most of its beads is not drift; write nothing to it
  const lost = a.beadsBefore - after.beads.length
  if (after.beads.length === 0 || lost > a.beadsBefore / 2) {
    const msg = `helix: the tracker lost ${after.beads.length === 0 ? a.beadsBefore : lost} of ${a.beadsBefore} beads during the attempt on ${sanitize(id)}; stopping without writing (restore it, e.g. from git)`
    return {kind: 'stopped', a, step: new Stop('error', msg, msg.replace(/^helix: /, '')), why: 'stopped', claim: {do: 'leave'}, freeSlot: true, counted: false}
  }
  await recordBeadSpend(r, id, res.tokens, res.verdict.costUsd)
  // a close of a bead that was not the agent's to close is undone, and said
  await reopenForeignCloses(r, a, after)
  // a decoded failure (claude is_error, codex turn.failed) fails the attempt whatever the exit code
  const rc = effectiveRc(res)
  const c = classifyOutcome({after, id, fingerprint: a.fp, openChildrenBefore: a.openChildrenBefore, rc, timedOut: killedForTime(res)})
  for (const b of a.batchIds) {
    const bead = after.byId.get(b)
    if (bead && statusOf(bead) === 'closed') r.ledger.closed(b)
  }
  r.log?.event('cycle outcome', {cycle: a.n, bead: id, outcome: c.outcome, rc: res.rc, timed_out: res.end === 'timeout', stalled: res.end === 'stalled', slot: a.slot})
  return {kind: 'classified', a, res: {...res, rc}, outcome: c.outcome, after, bead: c.bead, newChildren: c.newChildren}
}

export function record(r: RecordScope, a: AttemptCtx, res: DispatchResult, outcome: CycleRecord['outcome'], reason: string | null): CycleRecord {
  const ended = r.now()
  const rec: CycleRecord = {
    n: a.n,
    bead: a.target.id,
    outcome,
    started_at: a.startedAt.toISOString(),
    ended_at: ended.toISOString(),
    duration_ms: ended.getTime() - a.startedAt.getTime(),
    tokens: res.tokens,
    rc: res.rc,
    slot: a.slot,
    title: sanitize(a.target.title ?? ''),
    reason,
    cost_usd: res.verdict.costUsd,
    commits: [],
  }
  r.ledger.recordCycle(rec)
  return rec
}

/** what the outcome means for the attempt: on to the gate, or its end */
async function judge(r: JudgeScope, s: Extract<AttemptState, {kind: 'classified'}>): Promise<AttemptState> {
  const {a, res, after, bead} = s
  const id = a.target.id
  switch (s.outcome) {
    case 'COMPLETE':
    case 'SALVAGED': {
      record(r, a, res, s.outcome, null)
      r.inFlight.delete(a.slot)
      r.ledger.closed(id)
      r.ledger.clearBackoff(id)
      if (!a.ws) completeLine(r, a, res, s.outcome)
      return {kind: 'gated', a, res, outcome: s.outcome}
    }
    case 'DRIFT_CLOSED':
    case 'DRIFT': {
      record(r, a, res, 'DRIFT', 'queue drift')
      if (!bead) {
        r.d.out.both(`helix: queue drift detected for ${sanitize(id)}: bead disappeared`)
        return {kind: 'drifted', a, before: 'outcome', claim: {do: 'none'}}
      }
      r.log?.event('drift fields', {bead: id, fields: fingerprintDiff(a.fp, fingerprint(bead))})
      r.d.out.both(`helix: queue drift detected for ${sanitize(id)}; refusing stale completion`)
      const claim = s.outcome === 'DRIFT_CLOSED' ? {do: 'reopen' as const, note: `helix: reopened — ${DRIFT_REASON} (cycle ${a.n})`} : {do: 'release' as const, snap: after}
      return {kind: 'drifted', a, before: 'outcome', claim}
    }
    case 'DECOMPOSED': {
      record(r, a, res, 'DECOMPOSED', null)
      return {kind: 'decomposed', a, after, children: s.newChildren.length}
    }
    case 'FAILED':
    case 'NOT_COMPLETED': {
      const outcome: FailedOutcome = res.end === 'stalled' ? 'STALLED' : res.end === 'timeout' ? 'TIMEOUT' : s.outcome
      const reason = failureReason(outcome, res, {timeoutSec: r.o.timeoutSec, stallTimeoutSec: r.o.stallTimeoutSec})
      record(r, a, res, outcome, reason)
      return {kind: 'failed', a, res, outcome, reason, claim: {do: 'release', snap: after}, preserve: true}
    }
    default:
      return assertNever(s.outcome)
  }
}
