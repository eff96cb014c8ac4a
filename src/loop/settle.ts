/**
 * The one place an attempt ends: `settle()` switches over every terminal
 * state and does what that end means for the claim, the slot, the ledger's worker
 * entry and the workspace, in the order each end has always done it. The stages
 * (attempt.ts, land-step.ts) only decide; the table is in docs/run-loop.md.
 */
import {sanitize} from '../util/sanitize.js'
import {assertNever, type AttemptCtx, type AttemptState, type ClaimEnd, type Terminal} from './attempt-state.js'
import {DRIFT_REASON, completedAttempt, endCycle, failedAttempt, type CompletedScope, type EndCycleScope, type FailedScope} from './attempt-end.js'
import {pauseForQuota, type PauseScope} from './dispatch.js'
import {oweReopen, reopenIfClosed, reopenNotLanded, type ReopenScope} from './not-landed.js'
import type {Scope} from './scope.js'
import type {Step} from './stop.js'

/** keeping a workspace's work on a preserved ref, and reopening what the agent closed */
export type AbandonScope = ReopenScope & Scope<{d: 'landing'; ledger: 'state' | 'amendCycle'}>
/** what becomes of the claim: released while still ours, reopened, reopened NOT LANDED */
type ClaimScope = ReopenScope & Scope<{d: 'tracker'; run: 'releaseClaim'}>
/** every end of an attempt: the claim, the slot, the ledger's worker entry, the workspace, and the bookkeeping of each end */
export type SettleScope = CompletedScope &
  FailedScope &
  PauseScope &
  AbandonScope &
  ClaimScope &
  EndCycleScope &
  Scope<{
    d: 'tracker' | 'out' | 'landing' | 'agents' | 'context'
    ledger: 'endAttempt' | 'skip' | 'attemptsOf' | 'amendCycle' | 'focus' | 'completed'
    run: 'inFlight' | 'releaseClaim' | 't' | 'slotTag' | 'contextMd'
  }>

export async function settle(r: SettleScope, s: Terminal): Promise<Step> {
  switch (s.kind) {
    case 'landed':
      // the claim ended with the agent's close (or stays with the pull request); the slot let go at the outcome
      return completedAttempt(r, s.a, s.outcome)
    case 'failed':
      await endClaim(r, s.a, s.claim)
      r.inFlight.delete(s.a.slot)
      if (s.preserve) await abandonWorkspace(r, s, s.reason)
      return failedAttempt(r, s.a, s.res, s.outcome, s.reason)
    case 'passed':
      return 'continue'
    case 'unprepared':
      await r.releaseClaim(await r.d.tracker.read(), s.id, s.token)
      r.inFlight.delete(s.slot)
      r.ledger.endAttempt(s.slot)
      r.ledger.skip(s.id, s.why, r.ledger.attemptsOf(s.id))
      r.d.out.normal(`helix: [${r.t()}] ${r.slotTag(s.slot)}${sanitize(s.id)}: ${s.why}; skipping it this run`)
      return 'continue'
    case 'drifted': {
      const id = s.a.target.id
      if (s.before === 'landing') {
        // the worktree's work is kept as it is (no NOT LANDED note: the drift note says why)
        const ws = s.a.ws
        if (ws && r.d.landing) await r.d.landing.preserve(ws, 'queue drift')
        await endClaim(r, s.a, s.claim)
        r.ledger.skip(id, DRIFT_REASON, r.ledger.attemptsOf(id))
        r.ledger.amendCycle(s.a.n, {outcome: 'DRIFT'})
        await endCycle(r, s.a)
        return 'continue'
      }
      await endClaim(r, s.a, s.claim)
      r.inFlight.delete(s.a.slot)
      r.ledger.skip(id, DRIFT_REASON, r.ledger.attemptsOf(id))
      await abandonWorkspace(r, s, 'queue drift')
      await endCycle(r, s.a)
      return 'continue'
    }
    case 'decomposed': {
      const id = s.a.target.id
      await r.releaseClaim(s.after, id, s.a.token)
      await r.d.tracker.setFields(id, {issue_type: 'epic'})
      r.inFlight.delete(s.a.slot)
      r.d.out.normal(`helix: promoting ${sanitize(id)} to epic (agent created ${s.children} children)`)
      r.ledger.focus(id)
      r.contextMd = await r.d.context(await r.d.tracker.read(), id, true)
      await abandonWorkspace(r, s, 'decomposed')
      await endCycle(r, s.a)
      return 'continue'
    }
    case 'paused':
      // not the bead's fault: unclaimed, no attempt counted, every slot's dispatch pauses
      await r.releaseClaim(s.after, s.a.target.id, s.a.token)
      r.inFlight.delete(s.a.slot)
      r.ledger.endAttempt(s.a.slot)
      await abandonWorkspace(r, s, 'quota pause')
      return pauseForQuota(r, r.d.agents.impl, s.resetAt, s.message)
    case 'stopped':
      await endClaim(r, s.a, s.claim)
      if (s.freeSlot) r.inFlight.delete(s.a.slot)
      if (s.counted) {
        // one worker: the bead is closed and its work is in the checkout — the cycle did complete
        r.ledger.completed()
        await endCycle(r, s.a)
      }
      await abandonWorkspace(r, s, s.why)
      return s.step
    default:
      return assertNever(s)
  }
}

async function endClaim(r: ClaimScope, a: AttemptCtx, c: ClaimEnd): Promise<void> {
  switch (c.do) {
    case 'release':
      await r.releaseClaim(c.snap ?? (await r.d.tracker.read()), a.target.id, a.token)
      return
    case 'reopen':
      await r.d.tracker.reopen(a.target.id, c.note)
      return
    case 'reopen-not-landed':
      await reopenNotLanded(r, a.target.id, c.why, c.ref)
      return
    case 'keep':
    case 'leave':
    case 'none':
      return
    default:
      return assertNever(c)
  }
}

/** every non-landing end of a worker's attempt keeps its work on a preserved ref and removes the worktree */
export async function abandonWorkspace(r: AbandonScope, s: AttemptState, reason: string): Promise<void> {
  const a = 'a' in s ? s.a : null
  if (!a?.ws || !r.d.landing) return
  const ws = a.ws
  a.ws = null
  let ref: string | null = null
  try {
    ref = await r.d.landing.preserve(ws, reason, {beforeRemove: oweReopen(r, a.target.id)})
    if (ref) r.log?.event('attempt preserved', {bead: a.target.id, ref, reason, slot: a.slot})
  } catch (error) {
    r.log?.event('preserve failed', {bead: a.target.id, error: String(error)}, 'error')
  }
  // SPEC 18.1a: a bead the agent closed is never left closed with its work off the base
  await reopenIfClosed(r, a.target.id, reason, ref)
  const rec = r.ledger.state.cycles.find((c) => c.n === a.n)
  if (rec && (rec.outcome === 'COMPLETE' || rec.outcome === 'SALVAGED')) r.ledger.amendCycle(a.n, {outcome: 'NOT_LANDED', reason: sanitize(reason)})
}
