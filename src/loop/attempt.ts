/**
 * One attempt on one bead, as ONE explicit state machine (issue 11):
 *
 *   selected → claimed → dispatched → classified → gated → reviewed → landed
 *                                               ↘ failed
 *   and `released` for every end that is not a bead outcome (not claimed, drift,
 *   decomposed, quota pause, a stop).
 *
 * `advance` moves one state to the next with an exhaustive switch; `runAttempt`
 * drives it and settles the terminal state (after.ts).
 */
import type {DispatchResult} from '../agents/types.js'
import type {CycleRecord} from '../state/types.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import {acceptanceGate, completedAttempt, failedAttempt, review, reviewWanted} from './after.js'
import {dispatch, pauseForQuota} from './dispatch.js'
import {fingerprint, fingerprintDiff, sameFingerprint, type Fingerprint} from './fingerprint.js'
import {failureReason, titleSuffix, type FailedOutcome} from './lines.js'
import {abandonWorkspace, land} from './land-step.js'
import {classifyOutcome, openChildIds, type Outcome} from './outcome.js'
import type {Workspace} from './ports.js'
import {readyList, statusOf, type Selection} from './selection.js'
import {Stop, StopNow, interruptStop, type Step} from './stop.js'
import type {Run} from './supervisor.js'
import {EXIT} from '../util/errors.js'

export const DRIFT_REASON = 'queue drift: upstream governance fields changed during execution'

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
  record?: CycleRecord
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
  let s: AttemptState = {kind: 'selected', slot, snap, sel}
  try {
    while (!isTerminal(s)) s = await advance(r, s)
  } catch (error) {
    await abandonWorkspace(r, s, 'stopped')
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
      r.ledger.state.current_bead = null
      r.ledger.state.current_bead_started_at = null
      await acceptanceGate(r, s.a.n, s.a.target.id, s.a.ws?.dir)
      if (r.o.autoReview && (await reviewWanted(r, s.a.mark, s.a.ws))) {
        const step = await review(r, s.a.target.id, s.a.n, s.a.slot, s.a.ws?.dir)
        if (step instanceof Stop) {
          await abandonWorkspace(r, s, 'review stopped the run')
          return {kind: 'released', step}
        }
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
    r.focusedEpic = sel.epicFocus
    r.d.out.normal(`helix: epic focus: ${sanitize(sel.epicFocus)} → child ${sanitize(target.id)}`)
    r.contextMd = await r.d.context(snap, r.focusedEpic, true)
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
  const c = await r.d.tracker.claim(target.id)
  if (!c.ok) {
    r.d.out.normal(`helix: claim conflict on ${sanitize(target.id)} (${sanitize(c.message)}); skipping it this iteration`)
    r.exclude.add(target.id)
    return {kind: 'released', step: 'continue'}
  }
  r.exclude.clear()
  r.idleSpins = 0
  r.buildStreak = 0
  r.drainStreak = 0
  r.alignedSinceBuild = false
  r.backfilledSinceBuild = false
  const st = r.ledger.state
  const n = st.attempted_cycles + 1
  st.attempted_cycles = n
  st.current_cycle = n
  st.current_bead = target.id
  const startedAt = r.now()
  st.current_bead_started_at = startedAt.toISOString()
  r.inFlight.set(slot, {id: target.id, token: c.token})
  const attemptNo = (st.attempts[target.id] ?? 0) + 1
  let ws: Workspace | null = null
  if (r.workers > 1 && r.d.landing) ws = await r.d.landing.prepare(target.id, attemptNo, slot)
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
  const batchIds = r.workers > 1 ? [] : sel.batch.map((b) => b.id)
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
  }
  const prompt = await r.d.agents.prompt('implementation', {beadId: a.target.id, ...(a.batchIds.length > 0 ? {batchIds: a.batchIds} : {}), contextMd, ...(a.ws ? {root: a.ws.dir} : {})})
  const res = await dispatch(r, r.d.agents.impl, 'implementation', prompt, {
    beadId: a.target.id,
    claimToken: a.token,
    slot: a.slot,
    ...(a.ws ? {cwd: a.ws.dir, env: r.d.trackerDir ? {DDX_BEAD_DIR: r.d.trackerDir} : {}} : {}),
  })
  if (r.aborted) {
    await abandonWorkspace(r, {kind: 'claimed', a}, 'interrupted')
    return {kind: 'released', step: interruptStop(r.o.signal)}
  }
  return {kind: 'dispatched', a, res}
}

async function classify(r: Run, a: AttemptCtx, res: DispatchResult): Promise<AttemptState> {
  const after = await r.d.tracker.read()
  const id = a.target.id
  if (res.health?.kind === 'quota') {
    // not the bead's fault: unclaim, no attempt counted, pause every slot's dispatch
    await r.releaseClaim(after, id, a.token)
    r.inFlight.delete(a.slot)
    r.ledger.clearWorker(a.slot)
    r.ledger.state.current_bead = null
    r.ledger.state.current_bead_started_at = null
    await abandonWorkspace(r, {kind: 'claimed', a}, 'quota pause')
    return {kind: 'released', step: await pauseForQuota(r, r.d.agents.impl, res.health.resetAt, res.health.message)}
  }
  // SPEC 13.4: a tracker that lost most of its beads is not drift; write nothing to it
  const lost = a.beadsBefore - after.beads.length
  if (after.beads.length === 0 || lost > a.beadsBefore / 2) {
    r.inFlight.delete(a.slot)
    const msg = `helix: the tracker lost ${after.beads.length === 0 ? a.beadsBefore : lost} of ${a.beadsBefore} beads during the attempt on ${sanitize(id)}; stopping without writing (restore it, e.g. from git)`
    throw new StopNow(new Stop('error', EXIT.ERROR, msg, msg.replace(/^helix: /, '')))
  }
  // a decoded failure (claude is_error, codex turn.failed) fails the attempt whatever the exit code
  const rc = res.failed && res.rc === 0 ? 1 : res.rc
  const c = classifyOutcome({after, id, fingerprint: a.fp, openChildrenBefore: a.openChildrenBefore, rc, timedOut: res.timedOut || res.stalled === true})
  for (const b of a.batchIds) {
    const bead = after.byId.get(b)
    if (bead && statusOf(bead) === 'closed') r.ledger.closed(b)
  }
  r.log?.event('cycle outcome', {cycle: a.n, bead: id, outcome: c.outcome, rc: res.rc, timed_out: res.timedOut, stalled: res.stalled ?? false, slot: a.slot})
  return {kind: 'classified', a, res: {...res, rc}, outcome: c.outcome, after, bead: c.bead, newChildren: c.newChildren}
}

function record(r: Run, a: AttemptCtx, res: DispatchResult, outcome: CycleRecord['outcome'], reason: string | null): CycleRecord {
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
    cost_usd: res.costUsd ?? 0,
    commits: [],
  }
  r.ledger.recordCycle(rec)
  a.record = rec
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
      delete r.backoffUntil[id]
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
      r.skip.set(id, {reason: DRIFT_REASON, attempts: r.ledger.state.attempts[id] ?? 0})
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
      r.focusedEpic = id
      r.contextMd = await r.d.context(await r.d.tracker.read(), r.focusedEpic, true)
      await abandonWorkspace(r, s, 'decomposed')
      await endCycle(r, a)
      return {kind: 'released', step: 'continue'}
    }
    case 'FAILED':
    case 'NOT_COMPLETED': {
      const outcome: FailedOutcome = res.stalled ? 'STALLED' : res.timedOut ? 'TIMEOUT' : s.outcome
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

export function completeLine(r: Run, a: AttemptCtx, res: DispatchResult, outcome: Completed): void {
  const st = r.ledger.state
  const c = st.completed_cycles + 1
  const w = r.slotTag(a.slot)
  const id = sanitize(a.target.id)
  if (outcome === 'COMPLETE') r.d.out.both(`helix: [${r.t()}] ${w}cycle ${a.n}: ${id} → COMPLETE (${c} of ${st.attempted_cycles} cycles completed, ${st.total_tokens.toLocaleString('en-US')} tokens)`)
  else r.d.out.both(`helix: [${r.t()}] ${w}cycle ${a.n}: ${id} → SALVAGED (agent rc=${res.rc} but issue closed)`)
}

export async function endCycle(r: Run, a: AttemptCtx): Promise<void> {
  r.ledger.clearWorker(a.slot)
  if (r.ledger.state.current_bead === a.target.id) {
    r.ledger.state.current_bead = null
    r.ledger.state.current_bead_started_at = null
  }
  await r.ledger.save('running')
}

