/**
 * What follows an attempt's classification (SPEC 5.6, 5.8): the acceptance gate,
 * the post-implementation review, and the bookkeeping of a completed or failed
 * attempt (backoff, blocking, the systemic-failure check of SPEC 14.2).
 */
import type {DispatchResult} from '../agents/types.js'
import {REVIEW_STATUS, trailerInt, trailerValue} from '../agents/trailers.js'
import type {Bead} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import type {AttemptCtx} from './attempt.js'
import {endCycle} from './attempt.js'
import {BLOCK_AFTER_ATTEMPTS, backoffSeconds} from './backoff.js'
import {dispatchPausing, type DispatchExtra} from './dispatch.js'
import {runAction} from './drain.js'
import type {AttemptEndKind} from './health.js'
import {failureArrow, failureLineOf, type FailedOutcome} from './lines.js'
import type {Workspace} from './ports.js'
import {anySelectable, maybeCloseFocusedEpic} from './scheduler.js'
import {statusOf} from './selection.js'
import {Stop, interruptStop, type Step} from './stop.js'
import type {Run} from './supervisor.js'
import {EXIT} from '../util/errors.js'

const FAILED_REASON = `intractable after ${BLOCK_AFTER_ATTEMPTS} attempts with exponential backoff`
const NONCOMPLETE_REASON = `failed to complete after ${BLOCK_AFTER_ATTEMPTS} attempts with exponential backoff`

export async function completedAttempt(r: Run, a: AttemptCtx, _outcome: 'COMPLETE' | 'SALVAGED'): Promise<Step> {
  r.systemic.record({bead: a.target.id, kind: 'ok', line: null, durationMs: 0})
  const st = r.ledger.state
  const c = st.completed_cycles + 1
  st.completed_cycles = c
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
    if ((r.ledger.state.workers ?? []).length === 0 && !(await anySelectable(r, closed === 'none' ? snap : undefined))) return new Stop('max_cycles', EXIT.OK)
    return new Stop('max_cycles', EXIT.OK, `helix: reached max cycles (${r.o.maxCycles})`)
  }
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

export async function failedAttempt(r: Run, a: AttemptCtx, res: DispatchResult, outcome: FailedOutcome, reason: string): Promise<Step> {
  const id = a.target.id
  const w = r.slotTag(a.slot)
  r.d.out.summary(`helix: [${r.t()}] ${w}cycle ${a.n}: ${sanitize(id)} ${failureArrow(outcome, reason)}`)
  const kind = endKind(outcome)
  const line = kind === 'fail' ? failureLineOf(res) : reason
  const systemic = r.systemic.record({bead: id, kind, line, durationMs: res.durationMs})
  if (systemic) {
    // SPEC 14.2: the agent, not the bead — no attempt counted, no label, no note
    const why = sanitize(systemic)
    await endCycle(r, a)
    r.log?.event('systemic failure', {bead: id, line: systemic})
    void r.notify('agent_unavailable', {agent: r.d.agents.impl.name, reason: systemic})
    return new Stop('agent_unavailable', EXIT.AGENT_UNAVAILABLE, `helix: agent ${sanitize(r.d.agents.impl.name)} unavailable: ${why}`, why)
  }
  const st = r.ledger.state
  const n = (st.attempts[id] ?? 0) + 1
  st.attempts[id] = n
  // a completed attempt that did not land is a non-completed attempt (issue 11)
  const bead: 'FAILED' | 'NOT_COMPLETED' = outcome === 'NOT_COMPLETED' || outcome === 'NOT_LANDED' ? 'NOT_COMPLETED' : 'FAILED'
  const prevAllFailed = r.lastFailure.get(id)
  // "failed attempts" only when every attempt failed; a mix ending in non-completion is "non-completing"
  r.lastFailure.set(id, n === 1 ? bead : prevAllFailed === 'FAILED' && bead === 'FAILED' ? 'FAILED' : 'NOT_COMPLETED')
  if (outcome === 'NOT_COMPLETED') r.d.out.normal(`helix: ${w}cycle ${a.n} did not complete a tracked issue; completed cycles remain ${st.completed_cycles}`)
  else if (outcome === 'NOT_LANDED') r.d.out.normal(`helix: [${r.t()}] ${w}cycle ${a.n}: ${sanitize(id)} not landed: ${reason}`)
  else r.d.out.normal(`helix: ${w}implementation failed during cycle ${a.n} (will not count toward completed cycles)`)
  await endCycle(r, a)
  await r.d.recoverOrphans((l) => r.d.out.normal(l))
  if (n >= BLOCK_AFTER_ATTEMPTS) {
    const allFailed = r.lastFailure.get(id) === 'FAILED'
    r.d.out.normal(`helix: blocking ${sanitize(id)} after ${n} ${allFailed ? 'failed' : 'non-completing'} attempts`)
    await block(r, id, allFailed ? FAILED_REASON : NONCOMPLETE_REASON, n)
    delete r.backoffUntil[id]
    if (r.focusedEpic && a.target.parent === r.focusedEpic) {
      const epic = r.focusedEpic
      r.focusedEpic = null
      await block(r, epic, `child ${id} intractable after ${n} attempts`, st.attempts[epic] ?? 0)
    }
  } else {
    const secs = backoffSeconds(n, r.d.env)
    r.backoffUntil[id] = new Date(r.now().getTime() + secs * 1000).toISOString()
    r.log?.event('backoff', {bead: id, attempts: n, seconds: secs})
  }
  await r.ledger.save('running')
  return 'continue'
}

/** skip list + label `blocked` added + note appended once */
export async function block(r: Run, id: string, reason: string, attempts: number): Promise<void> {
  r.skip.set(id, {reason, attempts})
  r.d.out.summary(`helix: [${r.t()}] BLOCKED ${sanitize(id)} after ${attempts} attempts`)
  const snap = await r.d.tracker.read()
  const b = snap.byId.get(id)
  void r.notify('bead_blocked', {bead: id, title: b?.title ?? '', reason, attempts})
  if (!b) return
  if (!(b.labels ?? []).includes('blocked')) await r.d.tracker.addLabel(id, 'blocked')
  const already = (b.notes ?? '').split('\n').some((line) => line.startsWith('BLOCKED [') && line.endsWith(`]: ${reason}`))
  if (!already) await r.d.tracker.appendNote(id, `BLOCKED [${r.now().toISOString()}]: ${reason}`)
}

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

export async function acceptanceGate(r: Run, n: number, id: string, worktree?: string): Promise<void> {
  const scripts = await r.d.gates.acceptanceScripts()
  if (scripts.length === 0) return
  const failures: string[] = []
  for (const s of scripts) {
    const rc = await r.d.gates.runScript(s, worktree)
    r.log?.event('acceptance script', {script: s, rc})
    if (rc !== 0) failures.push(s)
  }
  if (failures.length === 0) return
  const snap = await r.d.tracker.read()
  const target = snap.byId.get(id)
  const isOpen = (b: Bead) => statusOf(b) !== 'closed' && statusOf(b) !== 'cancelled'
  const isFailureBead = (b: Bead | undefined, name: string) => !!b && (b.labels ?? []).includes('acceptance-failure') && b['spec-id'] === name
  const st = r.ledger.state
  for (const s of failures) {
    const name = s.split('/').pop() as string
    const title = `Acceptance failure: ${name} after ${id}`
    // de-duplicate: an open bead with this title, or any open failure bead for the same script;
    // and never chain a new failure bead off a closed failure bead for the same script
    const exists = snap.beads.some((b) => isOpen(b) && (b.title === title || isFailureBead(b, name)))
    if (exists || isFailureBead(target, name)) continue
    const newId = await r.d.tracker.create({title, labels: ['helix', 'acceptance-failure'], 'spec-id': name, acceptance: `${name} passes cleanly`})
    st.injected_supervisory = [
      ...(st.injected_supervisory ?? []),
      {id: newId, type: 'acceptance-failure', triggering_cycle: n, triggering_bead: id, created_at: r.now().toISOString()},
    ]
  }
  r.d.out.normal(`helix: acceptance criteria not met after cycle ${n} — failures filed as tracker issues`)
  await r.ledger.save()
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
  // the verdict, for `helix report` (issue 20)
  r.log?.event('review', {bead: id, review_status: status, issues: trailerInt(res.text, 'ISSUES_COUNT') ?? 0})
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
