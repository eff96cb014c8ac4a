/**
 * The review and alignment agents inside the loop (SPEC 5.6, 5.8): whether a
 * change is big enough to review, the post-implementation (or epic) review and
 * the periodic alignment pass.
 */
import {judgeAction, type Judgement} from '../agents/judge.js'
import {dispatchPausing, type DispatchExtra, type PausingScope} from './dispatch.js'
import {runAction, type ActionScope} from './drain.js'
import type {Workspace} from './ports.js'
import {Stop, interruptStop, type Step} from './stop.js'
import type {Scope} from './scope.js'

/** the review threshold against the change's size */
export type ReviewWantedScope = Scope<{d: 'gates'; o: 'reviewThreshold'; run: 'log'}>
/** a review: the prompt, the call, the verdict, the findings it filed */
export type ReviewScope = PausingScope &
  Scope<{d: 'out' | 'tracker' | 'agents' | 'trackerDir'; o: 'signal'; ledger: 'save' | 'state' | 'supervisory'; run: 't' | 'now' | 'log' | 'aborted'}>
/** the periodic alignment pass */
export type AlignmentScope = ActionScope & Scope<{d: 'out'; o: 'signal'; ledger: 'drainEvent'; run: 'aborted'}>
import {sanitize} from '../util/sanitize.js'

export async function reviewWanted(r: ReviewWantedScope, mark: string | null, ws?: Workspace | null): Promise<boolean> {
  if (r.o.reviewThreshold <= 0) return true
  // with workers the attempt's change is in its worktree, measured from the tip it started on (SPEC 15.1)
  const changed = ws ? await r.d.gates.changedSince(ws.baseTip, ws.dir) : await r.d.gates.changedSince(mark)
  if (!changed) {
    r.log?.event('review skipped: change size unknown (not a git worktree?)')
    return false
  }
  r.log?.event('change since cycle start', {...changed})
  return changed.lines >= r.o.reviewThreshold || changed.files >= 3
}

/** post-implementation (or epic) review; unreadable review stops the run */
export async function review(r: ReviewScope, id: string, n?: number, slot?: number, worktree?: string): Promise<Step> {
  r.d.out.normal(`helix: [${r.t()}] post-implementation review of ${sanitize(id)}`)
  const before = await r.d.tracker.read()
  const prompt = await r.d.agents.prompt('review', {scope: id, ...(worktree ? {root: worktree} : {})})
  await r.ledger.save('reviewing')
  // with workers the attempt's work is only in its worktree until it lands (SPEC 15.1): review it there, filing into the shared tracker
  const where: DispatchExtra = worktree ? {cwd: worktree, env: r.d.trackerDir ? {DDX_BEAD_DIR: r.d.trackerDir} : {}} : {}
  const res = await dispatchPausing(r, r.d.agents.review, 'review', prompt, {beadId: id, ...(slot !== undefined ? {slot} : {}), ...where})
  if (r.aborted) return interruptStop(r.o.signal)
  if (res instanceof Stop) return res
  // the one judgement the one-shot `helix review` uses too (agents/judge.ts)
  const j = judgeAction('review', res)
  if (j.kind === 'unreadable') return new Stop('error', `helix: ${j.message}`)
  if (j.kind !== 'done') return new Stop('error', `helix: ${reviewFailure(j)}`)
  const st = r.ledger.state
  const done = j.done
  // the verdict, for `helix report`
  if (done.action === 'review') r.log?.event('review', {bead: id, review_status: done.status, issues: done.status === 'ISSUES_FOUND' ? done.count : 0})
  if (done.action === 'review' && done.status === 'ISSUES_FOUND') {
    r.d.out.normal(`helix: review reported ${done.count} issue(s), ${done.filed} filed as tracker issues`)
    const after = await r.d.tracker.read()
    for (const b of after.beads) {
      if (before.byId.has(b.id) || !(b.labels ?? []).includes('review-finding')) continue
      r.ledger.supervisory({id: b.id, type: 'review-finding', triggering_cycle: n ?? st.current_cycle, triggering_bead: id, created_at: r.now().toISOString()})
    }
  }
  await r.ledger.save('running')
  return 'continue'
}

export async function periodicAlignment(r: AlignmentScope, c: number): Promise<Step> {
  r.d.out.normal(`helix: periodic alignment after ${c} completed cycles`)
  const ok = await runAction(r, 'alignment', 'repo')
  if (r.aborted) return interruptStop(r.o.signal)
  if (ok instanceof Stop) return ok
  if (!ok) return new Stop('error', `helix: periodic alignment failed after ${c} cycles`)
  r.ledger.drainEvent({kind: 'aligned'})
  return 'continue'
}

/** why a review call did not give a verdict, as its stop line says it */
function reviewFailure(j: Exclude<Judgement, {kind: 'done' | 'unreadable'}>): string {
  switch (j.kind) {
    case 'failed':
      return j.message
    case 'timeout':
      return `review timed out after ${j.afterSec}s`
    case 'stalled':
      return `review stalled: no output for ${j.afterSec}s`
    case 'interrupted':
      return 'review interrupted'
    case 'unhealthy':
      return `review agent unavailable: ${sanitize(j.health.kind === 'quota' ? j.health.message : j.health.reason)}`
    default:
      return assertNever(j)
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected judgement ${JSON.stringify(x)}`)
}
