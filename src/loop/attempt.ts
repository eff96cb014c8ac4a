/**
 * One attempt on one bead, as ONE explicit state machine:
 *
 *   selected → claimed → dispatched → classified → gated → reviewed → landed
 *                                               ↘ failed
 *   and `released` for every end that is not a bead outcome (not claimed, drift,
 *   decomposed, quota pause, a stop).
 *
 * `advance` moves one state to the next with an exhaustive switch; `runAttempt`
 * drives it and settles the terminal state (attempt-end.ts).
 */
import {effectiveRc, killedForTime} from '../agents/judge.js'
import type {DispatchResult} from '../agents/types.js'
import type {CycleRecord} from '../state/types.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import {acceptanceGate} from './acceptance.js'
import {DRIFT_REASON, completeLine, completedAttempt, endCycle, failedAttempt} from './attempt-end.js'
import {budgetStop, dispatch, pauseForQuota} from './dispatch.js'
import {blockIfOverBudget, recordBeadSpend} from './bead-budget.js'
import {fingerprint, fingerprintDiff, sameFingerprint, type Fingerprint} from './fingerprint.js'
import {failureReason, titleSuffix, type FailedOutcome} from './wording.js'
import {abandonWorkspace, land} from './land-step.js'
import {takeCheckTail} from './resolve-step.js'
import {classifyOutcome, openChildIds, type Outcome} from './outcome.js'
import type {Workspace} from './ports.js'
import {review, reviewWanted} from './review.js'
import {readyList, statusOf, type Selection} from './selection.js'
import {Stop, interruptStop, type Step} from './stop.js'
import type {Run} from './run.js'
import {errorMessage} from '../util/errors.js'
import {idProblem} from '../git/names.js'

export interface AttemptCtx {
  slot: number
  n: number
  target: Bead
  ready: number
  batchIds: string[]
  fp: Fingerprint
  openChildrenBefore: Set<string>
  /** beads in the tracker when the attempt was claimed (SPEC 13.4) */
  beadsBefore: number
  token: string
  startedAt: Date
  mark: string | null
  ws: Workspace | null
  /** HEAD at the claim (one worker in the checkout): the cycle's commits are counted from it */
  headBefore: string | null
  /** SPEC 20.5: the review's verdict when one ran (a pull request's body names it) */
  review?: string
}

export type Completed = 'COMPLETE' | 'SALVAGED'

export type AttemptState =
  | {kind: 'selected'; slot: number; snap: TrackerSnapshot; sel: Selection}
  | {kind: 'claimed'; a: AttemptCtx}
  | {kind: 'dispatched'; a: AttemptCtx; res: DispatchResult}
  | {kind: 'classified'; a: AttemptCtx; res: DispatchResult; outcome: Outcome; after: TrackerSnapshot; bead: Bead | undefined; newChildren: string[]}
  | {kind: 'gated'; a: AttemptCtx; res: DispatchResult; outcome: Completed}
  | {kind: 'reviewed'; a: AttemptCtx; res: DispatchResult; outcome: Completed}
  | {kind: 'landed'; a: AttemptCtx; res: DispatchResult; outcome: Completed}
  | {kind: 'failed'; a: AttemptCtx; res: DispatchResult; outcome: FailedOutcome; reason: string}
  | {kind: 'released'; step: Step}

type Terminal = Extract<AttemptState, {kind: 'landed' | 'failed' | 'released'}>

function assertNever(x: never): never {
  throw new Error(`unhandled attempt state ${JSON.stringify(x)}`)
}

function isTerminal(s: AttemptState): s is Terminal {
  return s.kind === 'landed' || s.kind === 'failed' || s.kind === 'released'
}

/** One attempt from selection to its end; the step says whether the run goes on. */
export async function runAttempt(r: Run, slot: number, snap: TrackerSnapshot, sel: Selection): Promise<Step> {
  return runFrom(r, {kind: 'selected', slot, snap, sel})
}

/** Drive an attempt from any state to its end (a resumed attempt starts at `gated`, SPEC 18.2). */
export async function runFrom(r: Run, s0: AttemptState): Promise<Step> {
  let s = s0
  try {
    while (!isTerminal(s)) s = await advance(r, s)
  } catch (error) {
    const why = errorMessage(error).split('\n')[0]
    await abandonWorkspace(r, s, `the run stopped (${String(why).replace(/^helix: /, '')})`)
    throw error
  }
  switch (s.kind) {
    case 'landed':
      return completedAttempt(r, s.a, s.outcome)
    case 'failed':
      return failedAttempt(r, s.a, s.res, s.outcome, s.reason)
    case 'released':
      return s.step
    default:
      return assertNever(s)
  }
}

export async function advance(r: Run, s: Exclude<AttemptState, Terminal>): Promise<AttemptState> {
  switch (s.kind) {
    case 'selected':
      return claim(r, s.slot, s.snap, s.sel)
    case 'claimed':
      return implement(r, s.a)
    case 'dispatched':
      return classify(r, s.a, s.res)
    case 'classified':
      return settleOutcome(r, s)
    case 'gated': {
      r.ledger.implementationDone(s.a.slot)
      await acceptanceGate(r, s.a.n, s.a.target.id, s.a.ws?.dir)
      if (r.o.autoReview && (await reviewWanted(r, s.a.mark, s.a.ws))) {
        const step = await review(r, s.a.target.id, s.a.n, s.a.slot, s.a.ws?.dir)
        if (step instanceof Stop) {
          // one worker: the bead is closed and its work is in the checkout — the cycle did complete
          // (its COMPLETE line was printed); the run-complete line must count it
          if (!s.a.ws) {
            r.ledger.completed()
            await endCycle(r, s.a)
          }
          await abandonWorkspace(r, s, 'review stopped the run')
          return {kind: 'released', step}
        }
        s.a.review = 'a post-implementation review ran and let it land (anything it found is filed as beads)'
      }
      return {kind: 'reviewed', a: s.a, res: s.res, outcome: s.outcome}
    }
    case 'reviewed':
      return land(r, s.a, s.res, s.outcome)
    default:
      return assertNever(s)
  }
}

async function claim(r: Run, slot: number, snap: TrackerSnapshot, sel: Selection): Promise<AttemptState> {
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
    return {kind: 'released', step: 'continue'}
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
    return {kind: 'released', step: 'continue'}
  }
  // SPEC 14.6: a bead at its budget is blocked, not dispatched again
  if (await blockIfOverBudget(r, freshBead)) {
    await r.ledger.save()
    return {kind: 'released', step: 'continue'}
  }
  const c = await r.d.tracker.claim(target.id)
  if (!c.ok && c.blocked) {
    // nobody holds it and trying again changes nothing: skipped for the run, named in the blocker report
    r.ledger.skip(target.id, c.message, r.ledger.attemptsOf(target.id))
    r.d.out.normal(`helix: cannot claim ${sanitize(target.id)}: ${sanitize(c.message)}; skipping it this run`)
    return {kind: 'released', step: 'continue'}
  }
  if (!c.ok) {
    r.d.out.normal(`helix: claim conflict on ${sanitize(target.id)} (${sanitize(c.message)}); skipping it this iteration`)
    r.exclude.add(target.id)
    return {kind: 'released', step: 'continue'}
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
      const why = sanitize(errorMessage(error).replace(/^helix: /, ''))
      await r.releaseClaim(await r.d.tracker.read(), target.id, c.token)
      r.inFlight.delete(slot)
      r.ledger.endAttempt(slot)
      r.ledger.skip(target.id, why, r.ledger.attemptsOf(target.id))
      r.d.out.normal(`helix: [${r.t()}] ${r.slotTag(slot)}${sanitize(target.id)}: ${why}; skipping it this run`)
      return {kind: 'released', step: 'continue'}
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
  const a: AttemptCtx = {slot, n, target, ready, batchIds, fp, openChildrenBefore, beadsBefore: fresh.beads.length, token: c.token, startedAt, mark, ws, headBefore}
  return {kind: 'claimed', a}
}

async function implement(r: Run, a: AttemptCtx): Promise<AttemptState> {
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
  if (over) {
    await abandonWorkspace(r, {kind: 'claimed', a}, 'stopped')
    return {kind: 'released', step: over}
  }
  r.ledger.dispatched()
  const res = await dispatch(r, r.d.agents.impl, 'implementation', prompt, {
    beadId: a.target.id,
    claimToken: a.token,
    slot: a.slot,
    // SPEC 19.2: a --remote worktree's agent edits the worktree's own tracker copy (ws.trackerDir)
    ...(a.ws ? {cwd: a.ws.dir, env: (a.ws.trackerDir ?? r.d.trackerDir) ? {DDX_BEAD_DIR: (a.ws.trackerDir ?? r.d.trackerDir) as string} : {}} : {}),
  })
  if (r.aborted) {
    await abandonWorkspace(r, {kind: 'claimed', a}, 'interrupted')
    return {kind: 'released', step: interruptStop(r.o.signal)}
  }
  if (res instanceof Stop) {
    // the agent is unavailable: the bead is unclaimed when the run stops (its claim stays in flight until then)
    await abandonWorkspace(r, {kind: 'claimed', a}, `the run stopped (${String(res.detail ?? res.cause.reason).replace(/^helix: /, '')})`)
    return {kind: 'released', step: res}
  }
  return {kind: 'dispatched', a, res}
}

async function classify(r: Run, a: AttemptCtx, res: DispatchResult): Promise<AttemptState> {
  const after = await r.d.tracker.read()
  const id = a.target.id
  const health = res.verdict.health
  if (health.kind === 'quota') {
    // not the bead's fault: unclaim, no attempt counted, pause every slot's dispatch
    await r.releaseClaim(after, id, a.token)
    r.inFlight.delete(a.slot)
    r.ledger.endAttempt(a.slot)
    await abandonWorkspace(r, {kind: 'claimed', a}, 'quota pause')
    return {kind: 'released', step: await pauseForQuota(r, r.d.agents.impl, health.resetAt, health.message)}
  }
  // SPEC 13.4: a tracker that lost most of its beads is not drift; write nothing to it
  const lost = a.beadsBefore - after.beads.length
  if (after.beads.length === 0 || lost > a.beadsBefore / 2) {
    r.inFlight.delete(a.slot)
    await abandonWorkspace(r, {kind: 'claimed', a}, 'stopped')
    const msg = `helix: the tracker lost ${after.beads.length === 0 ? a.beadsBefore : lost} of ${a.beadsBefore} beads during the attempt on ${sanitize(id)}; stopping without writing (restore it, e.g. from git)`
    return {kind: 'released', step: new Stop('error', msg, msg.replace(/^helix: /, ''))}
  }
  await recordBeadSpend(r, id, res.tokens, res.verdict.costUsd)
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

export function record(r: Run, a: AttemptCtx, res: DispatchResult, outcome: CycleRecord['outcome'], reason: string | null): CycleRecord {
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

async function settleOutcome(r: Run, s: Extract<AttemptState, {kind: 'classified'}>): Promise<AttemptState> {
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
      } else {
        r.log?.event('drift fields', {bead: id, fields: fingerprintDiff(a.fp, fingerprint(bead))})
        r.d.out.both(`helix: queue drift detected for ${sanitize(id)}; refusing stale completion`)
        if (s.outcome === 'DRIFT_CLOSED') await r.d.tracker.reopen(id, `helix: reopened — ${DRIFT_REASON} (cycle ${a.n})`)
        else await r.releaseClaim(after, id, a.token)
      }
      r.inFlight.delete(a.slot)
      r.ledger.skip(id, DRIFT_REASON, r.ledger.attemptsOf(id))
      await abandonWorkspace(r, s, 'queue drift')
      await endCycle(r, a)
      return {kind: 'released', step: 'continue'}
    }
    case 'DECOMPOSED': {
      record(r, a, res, 'DECOMPOSED', null)
      await r.releaseClaim(after, id, a.token)
      await r.d.tracker.setFields(id, {issue_type: 'epic'})
      r.inFlight.delete(a.slot)
      r.d.out.normal(`helix: promoting ${sanitize(id)} to epic (agent created ${s.newChildren.length} children)`)
      r.ledger.focus(id)
      r.contextMd = await r.d.context(await r.d.tracker.read(), id, true)
      await abandonWorkspace(r, s, 'decomposed')
      await endCycle(r, a)
      return {kind: 'released', step: 'continue'}
    }
    case 'FAILED':
    case 'NOT_COMPLETED': {
      const outcome: FailedOutcome = res.end === 'stalled' ? 'STALLED' : res.end === 'timeout' ? 'TIMEOUT' : s.outcome
      const reason = failureReason(outcome, res, {timeoutSec: r.o.timeoutSec, stallTimeoutSec: r.o.stallTimeoutSec})
      record(r, a, res, outcome, reason)
      await r.releaseClaim(after, id, a.token)
      r.inFlight.delete(a.slot)
      await abandonWorkspace(r, s, reason)
      return {kind: 'failed', a, res, outcome, reason}
    }
    default:
      return assertNever(s.outcome)
  }
}
