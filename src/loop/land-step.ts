/** The landing end of a worker's attempt (SPEC 15.2): drift re-check, land or keep the branch, preserve the rest. */
import type {DispatchResult} from '../agents/types.js'
import {sanitize} from '../util/sanitize.js'
import type {AttemptCtx, AttemptState, Completed} from './attempt-state.js'
import {DRIFT_REASON, completeLine, type LineScope} from './attempt-end.js'
import {fingerprint, sameFingerprint} from './fingerprint.js'
import {statusOf} from './selection.js'
import type {Scope} from './scope.js'
import {landWithRepair, landedLine, type ResolveScope} from './resolve-step.js'
import {Stop, interruptStop} from './stop.js'
import {EXIT} from '../util/errors.js'

/** a worker's landing: the drift re-check, the landing port (and its resolve rounds), the cycle's commits, its lines */
export type LandScope = ResolveScope &
  LineScope &
  Scope<{d: 'landing' | 'tracker' | 'gates' | 'out'; o: 'land' | 'signal'; ledger: 'amendCycle'; run: 't' | 'slotTag' | 'aborted'}>

/** SPEC 15.2: a worker's completed attempt lands on the base after a drift re-check; N=1 has nothing to land */
export async function land(r: LandScope, a: AttemptCtx, res: DispatchResult, outcome: Completed): Promise<AttemptState> {
  const ws = a.ws
  if (!ws || !r.d.landing) {
    // one worker: the agent committed in the checkout; the record keeps those commits
    if (a.headBefore && r.d.gates.commitsSince) r.ledger.amendCycle(a.n, {commits: await r.d.gates.commitsSince(a.headBefore)})
    return {kind: 'landed', a, res, outcome}
  }
  const id = a.target.id
  const now = (await r.d.tracker.read()).byId.get(id)
  if (!now || !sameFingerprint(a.fp, fingerprint(now))) {
    r.d.out.both(`helix: queue drift detected for ${sanitize(id)} before landing; refusing stale completion`)
    const closed = now !== undefined && statusOf(now) === 'closed'
    return {kind: 'drifted', a, before: 'landing', claim: closed ? {do: 'reopen', note: `helix: reopened — ${DRIFT_REASON} (cycle ${a.n})`} : {do: 'none'}}
  }
  if (r.o.land === 'none') {
    const branch = await r.d.landing.keepBranch(ws)
    // the work lives on its branch now: nothing of the workspace is left to settle
    a.ws = null
    const keptLine = `helix: [${r.t()}] ${r.slotTag(a.slot)}kept ${sanitize(id)} on branch ${sanitize(branch)} (--land none)`
    r.d.out.both(keptLine)
    completeLine(r, a, res, outcome)
    return {kind: 'landed', a, res, outcome}
  }
  const end = await landWithRepair(r, a, ws, res)
  // SPEC 20.4: a resolve call that stopped the run (agent unavailable, budget, interrupt) ends the attempt not landed
  if (end.kind === 'stop') return {kind: 'stopped', a, step: end.stop, why: end.reason, claim: {do: 'none'}, freeSlot: false, counted: false}
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
  if (lr.refused) {
    // SPEC 20.1: the remote's rule, not the bead's: not counted, no note; every landing would meet it, so the run stops
    r.ledger.amendCycle(a.n, {outcome: 'NOT_LANDED', reason})
    const detail = lr.refused.replace(/^helix: /, '')
    // a forge away past --max-offline stops as a remote away does (SPEC 19.4: exit 4); a refusal is the operator's to fix (exit 1)
    const step = lr.unavailable ? new Stop('agent_unavailable', lr.refused, detail) : new Stop({reason: 'error', exit: EXIT.ERROR}, lr.refused, detail)
    return {kind: 'stopped', a, step, why: reason, claim: {do: 'none'}, freeSlot: false, counted: false}
  }
  if (r.aborted) {
    // SPEC 5.10/18.1a: the stop ended the landing (a race loop, a land check): a stopped attempt, not a failed one
    r.ledger.amendCycle(a.n, {outcome: 'NOT_LANDED', reason})
    return {kind: 'stopped', a, step: interruptStop(r.o.signal), why: reason, claim: {do: 'reopen-not-landed', why: lr.reason, ref: lr.preservedRef}, freeSlot: false, counted: false}
  }
  r.ledger.amendCycle(a.n, {outcome: 'NOT_LANDED', reason})
  // the landing kept the work (lr.preservedRef); the bead is reopened with a NOT LANDED note
  return {kind: 'failed', a, res, outcome: 'NOT_LANDED', reason, claim: {do: 'reopen-not-landed', why: lr.reason, ref: lr.preservedRef}, preserve: false}
}
