/** The landing end of a worker's attempt (SPEC 15.2): drift re-check, land or keep the branch, preserve the rest. */
import type {DispatchResult} from '../agents/types.js'
import {sanitize} from '../util/sanitize.js'
import type {AttemptCtx, AttemptState, Completed} from './attempt.js'
import {DRIFT_REASON, completeLine, endCycle} from './attempt-end.js'
import {fingerprint, sameFingerprint} from './fingerprint.js'
import {statusOf} from './selection.js'
import type {Run} from './run.js'
import {reopenIfClosed, reopenNotLanded} from './not-landed.js'
import {landWithRepair, landedLine} from './resolve-step.js'

/** SPEC 15.2: a worker's completed attempt lands on the base after a drift re-check; N=1 has nothing to land */
export async function land(r: Run, a: AttemptCtx, res: DispatchResult, outcome: Completed): Promise<AttemptState> {
  const ws = a.ws
  if (!ws || !r.d.landing) {
    // one worker: the agent committed in the checkout; the record keeps those commits
    if (a.headBefore && r.d.gates.commitsSince) r.ledger.amendCycle(a.n, {commits: await r.d.gates.commitsSince(a.headBefore)})
    return {kind: 'landed', a, res, outcome}
  }
  const id = a.target.id
  const now = (await r.d.tracker.read()).byId.get(id)
  if (!now || !sameFingerprint(a.fp, fingerprint(now))) {
    await r.d.landing.preserve(ws, 'queue drift')
    r.d.out.both(`helix: queue drift detected for ${sanitize(id)} before landing; refusing stale completion`)
    if (now && statusOf(now) === 'closed') await r.d.tracker.reopen(id, `helix: reopened — ${DRIFT_REASON} (cycle ${a.n})`)
    r.ledger.skip(id, DRIFT_REASON, r.ledger.attemptsOf(id))
    r.ledger.amendCycle(a.n, {outcome: 'DRIFT'})
    await endCycle(r, a)
    return {kind: 'released', step: 'continue'}
  }
  if (r.o.land === 'none') {
    const branch = await r.d.landing.keepBranch(ws)
    const keptLine = `helix: [${r.t()}] ${r.slotTag(a.slot)}kept ${sanitize(id)} on branch ${sanitize(branch)} (--land none)`
    r.d.out.both(keptLine)
    completeLine(r, a, res, outcome)
    return {kind: 'landed', a, res, outcome}
  }
  const end = await landWithRepair(r, a, ws, res)
  if (end.kind === 'stop') {
    // SPEC 20.4: a resolve call that stopped the run (agent unavailable, budget, interrupt) ends the attempt not landed
    await abandonWorkspace(r, {kind: 'reviewed', a, res, outcome}, end.reason)
    return {kind: 'released', step: end.stop}
  }
  const lr = end.lr
  // landed or preserved: the worktree is gone either way
  a.ws = null
  if (lr.landed && lr.pr) {
    // SPEC 20.5: the attempt ends at "pull request opened"; the close reaches the base with the merge
    r.ledger.amendCycle(a.n, {commits: lr.commits})
    r.d.out.both(`helix: [${r.t()}] ${r.slotTag(a.slot)}pull request opened for ${sanitize(id)}: ${sanitize(lr.pr.url)} (awaiting merge)`)
    completeLine(r, a, res, outcome)
    return {kind: 'landed', a, res, outcome}
  }
  if (lr.landed) {
    r.ledger.amendCycle(a.n, {commits: lr.commits})
    r.d.out.both(landedLine(r, a, lr, end.rounds > 0))
    completeLine(r, a, res, outcome)
    return {kind: 'landed', a, res, outcome}
  }
  const reason = sanitize(lr.reason)
  await reopenNotLanded(r, id, lr.reason, lr.preservedRef)
  r.ledger.amendCycle(a.n, {outcome: 'NOT_LANDED', reason})
  return {kind: 'failed', a, res, outcome: 'NOT_LANDED', reason}
}

/** every non-landing end of a worker's attempt keeps its work on a preserved ref and removes the worktree */
export async function abandonWorkspace(r: Run, s: AttemptState, reason: string): Promise<void> {
  const a = 'a' in s ? s.a : null
  if (!a?.ws || !r.d.landing) return
  const ws = a.ws
  a.ws = null
  let ref: string | null = null
  try {
    ref = await r.d.landing.preserve(ws, reason)
    if (ref) r.log?.event('attempt preserved', {bead: a.target.id, ref, reason, slot: a.slot})
  } catch (error) {
    r.log?.event('preserve failed', {bead: a.target.id, error: String(error)}, 'error')
  }
  // SPEC 18.1a: a bead the agent closed is never left closed with its work off the base
  await reopenIfClosed(r, a.target.id, reason, ref)
  const rec = r.ledger.state.cycles.find((c) => c.n === a.n)
  if (rec && (rec.outcome === 'COMPLETE' || rec.outcome === 'SALVAGED')) r.ledger.amendCycle(a.n, {outcome: 'NOT_LANDED', reason: sanitize(reason)})
}

