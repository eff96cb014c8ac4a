/**
 * The review and alignment agents inside the loop (SPEC 5.6, 5.8): whether a
 * change is big enough to review, the post-implementation (or epic) review and
 * the periodic alignment pass.
 */
import {REVIEW_STATUS, trailerInt, trailerValue} from '../agents/trailers.js'
import {dispatchPausing, type DispatchExtra} from './dispatch.js'
import {runAction} from './drain.js'
import type {Workspace} from './ports.js'
import {Stop, interruptStop, type Step} from './stop.js'
import type {Run} from './supervisor.js'
import {EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

export async function reviewWanted(r: Run, mark: string | null, ws?: Workspace | null): Promise<boolean> {
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
export async function review(r: Run, id: string, n?: number, slot?: number, worktree?: string): Promise<Step> {
  r.d.out.normal(`helix: [${r.t()}] post-implementation review of ${sanitize(id)}`)
  const before = await r.d.tracker.read()
  const prompt = await r.d.agents.prompt('review', {scope: id, ...(worktree ? {root: worktree} : {})})
  await r.ledger.save('reviewing')
  // with workers the attempt's work is only in its worktree until it lands (SPEC 15.1): review it there, filing into the shared tracker
  const where: DispatchExtra = worktree ? {cwd: worktree, env: r.d.trackerDir ? {DDX_BEAD_DIR: r.d.trackerDir} : {}} : {}
  const res = await dispatchPausing(r, r.d.agents.review, 'review', prompt, {beadId: id, ...(slot !== undefined ? {slot} : {}), ...where})
  if (r.aborted) return interruptStop(r.o.signal)
  const status = trailerValue(res.text, 'REVIEW_STATUS', REVIEW_STATUS)
  if (!status) return new Stop('error', EXIT.ERROR, 'helix: review output missing REVIEW_STATUS trailer')
  const st = r.ledger.state
  if (status === 'ISSUES_FOUND') {
    const count = trailerInt(res.text, 'ISSUES_COUNT') ?? 0
    const filed = trailerInt(res.text, 'FINDINGS_FILED') ?? 0
    r.d.out.normal(`helix: review reported ${count} issue(s), ${filed} filed as tracker issues`)
    const after = await r.d.tracker.read()
    for (const b of after.beads) {
      if (before.byId.has(b.id) || !(b.labels ?? []).includes('review-finding')) continue
      st.injected_supervisory = [
        ...(st.injected_supervisory ?? []),
        {id: b.id, type: 'review-finding', triggering_cycle: n ?? st.current_cycle, triggering_bead: id, created_at: r.now().toISOString()},
      ]
    }
  }
  await r.ledger.save('running')
  return 'continue'
}

export async function periodicAlignment(r: Run, c: number): Promise<Step> {
  r.d.out.normal(`helix: periodic alignment after ${c} completed cycles`)
  const ok = await runAction(r, 'alignment', 'repo')
  if (r.aborted) return interruptStop(r.o.signal)
  if (!ok) return new Stop('error', EXIT.ERROR, `helix: periodic alignment failed after ${c} cycles`)
  r.alignedSinceBuild = true
  return 'continue'
}
