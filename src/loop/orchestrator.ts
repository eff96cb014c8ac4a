/**
 * The run loop (SPEC 4, 5, 6.1, 6.2, 7.3): one orchestrator that owns the state
 * machine and receives every effect through `deps` (ports.ts). No I/O here that
 * does not go through a port, so each branch is a unit test with fakes.
 */
import type {ActionName, AgentSpec, DispatchResult, SessionLogLike} from '../agents/types.js'
import {BACKFILL_STATUS, BACKFILL_SUCCESS, NEXT_ACTION_CODES, REVIEW_STATUS, trailerInt, trailerValue} from '../agents/trailers.js'
import {emptyRunState} from '../state/run-state.js'
import type {CycleOutcome, RunState, StopReason} from '../state/types.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {HelixError, helixMessage} from '../util/errors.js'
import {hhmmss} from '../util/time.js'
import {BLOCK_AFTER_ATTEMPTS, backoffSeconds} from './backoff.js'
import {fingerprint, fingerprintDiff, sameFingerprint} from './fingerprint.js'
import {classifyOutcome, openChildIds} from './outcome.js'
import type {BlockerEntry, LoopDeps, LoopOptions, LoopResult} from './ports.js'
import {isEpicBead, readyList, selectTarget, selectableBeads, statusOf, type Selection} from './selection.js'

export const DRIFT_REASON = 'queue drift: upstream governance fields changed during execution'
const FAILED_REASON = `intractable after ${BLOCK_AFTER_ATTEMPTS} attempts with exponential backoff`
const NONCOMPLETE_REASON = `failed to complete after ${BLOCK_AFTER_ATTEMPTS} attempts with exponential backoff`

export {hhmmss} from '../util/time.js'

/** A stop decided by the loop: message (optional), reason, exit code. */
class Stop {
  constructor(
    readonly reason: StopReason,
    readonly exitCode: number,
    readonly message?: string,
  ) {}
}

type Step = 'continue' | Stop

interface InFlight {
  id: string
  token: string
}

export async function runLoop(deps: LoopDeps, opts: LoopOptions): Promise<LoopResult> {
  if (opts.dryRun) return dryRun(deps, opts)
  // SPEC 5.1 checks the agents right after taking the mutex; checking them first
  // is read-only and means a missing agent (bad input) changes nothing on disk:
  // no pid file, no .ddx/ created in a directory that had none.
  try {
    deps.agents.check()
  } catch (error) {
    if (!(error instanceof HelixError)) throw error
    deps.out.both(helixMessage(error.message))
    return {exitCode: error.exitCode, stopReason: null}
  }
  const acquired = deps.mutex.acquire()
  if (!acquired.ok) {
    const bump = (prev: RunState) => ({...prev, parallel_run_denied_count: (prev.parallel_run_denied_count ?? 0) + 1, updated_at: deps.clock.now().toISOString()})
    if (deps.state.update) await deps.state.update(bump) // under the run-state lock (SPEC 13.1)
    else await deps.state.save(bump((await deps.state.load()) ?? emptyRunState(deps.clock.now())))
    const name = opts.commandName ?? 'helix run'
    deps.out.both(`${name}: already running (pid=${acquired.holder.pid}, started=${acquired.holder.started})`)
    return {exitCode: 2, stopReason: null}
  }
  try {
    return await new Supervisor(deps, opts).run()
  } finally {
    deps.mutex.release()
  }
}

class Supervisor {
  private readonly d: LoopDeps
  private readonly o: LoopOptions
  private state!: RunState
  private log: SessionLogLike | null = null
  private readonly skip = new Map<string, {reason: string; attempts: number}>()
  private readonly backoffUntil: Record<string, string> = {}
  private readonly lastFailure = new Map<string, 'FAILED' | 'NOT_COMPLETED'>()
  private readonly exclude = new Set<string>()
  private focusedEpic: string | null = null
  private inFlight: InFlight | null = null
  private alignedSinceBuild = false
  private backfilledSinceBuild = false
  private buildStreak = 0
  private drainStreak = 0
  private idleSpins = 0
  private contextMd = ''

  constructor(deps: LoopDeps, opts: LoopOptions) {
    this.d = deps
    this.o = opts
  }

  private now(): Date {
    return this.d.clock.now()
  }

  private t(): string {
    return hhmmss(this.now())
  }

  private get aborted(): boolean {
    return this.o.signal?.aborted === true
  }

  private interruptStop(): Stop {
    const reason = String(this.o.signal?.reason ?? 'SIGINT')
    // SIGHUP: the terminal or ssh session went away (exit 129, like a shell would report)
    const sig = reason === 'SIGTERM' || reason === 'SIGHUP' ? reason : 'SIGINT'
    return new Stop('interrupted', sig === 'SIGTERM' ? 143 : sig === 'SIGHUP' ? 129 : 130, `helix: interrupted (${sig})`)
  }

  private async save(phase?: string): Promise<void> {
    if (phase) this.state.phase = phase
    this.state.updated_at = this.now().toISOString()
    this.state.skipped = [...this.skip].map(([id, s]) => ({id, reason: s.reason, attempts: s.attempts}))
    this.state.backoff_until = {...this.backoffUntil}
    this.state.focused_epic = this.focusedEpic
    // a denied `helix run` bumps parallel_run_denied_count in this file while we run: keep its count
    const onDisk = await this.d.state.load()
    if (onDisk && onDisk.parallel_run_denied_count > this.state.parallel_run_denied_count) {
      this.state.parallel_run_denied_count = onDisk.parallel_run_denied_count
    }
    await this.d.state.save(this.state)
  }

  async run(): Promise<LoopResult> {
    let stop: Stop
    try {
      stop = await this.main()
    } catch (error) {
      stop = await this.errorStop(error)
    }
    return this.finish(stop)
  }

  private async errorStop(error: unknown): Promise<Stop> {
    const message = error instanceof HelixError ? error.message : String((error as Error)?.message ?? error).split('\n')[0]
    const code = error instanceof HelixError ? error.exitCode : 1
    if (this.aborted) return this.interruptStop()
    return new Stop('error', code, helixMessage(message))
  }

  private async main(): Promise<Stop> {
    const prev = await this.d.state.load()
    const started = this.now()
    this.state = {
      ...emptyRunState(started),
      pid: this.d.pid,
      started_at: started.toISOString(),
      agent: this.d.agents.impl.name,
      review_agent: this.d.agents.review.name,
      last_run: prev?.last_run ?? null,
      parallel_run_denied_count: prev?.parallel_run_denied_count ?? 0,
      phase: 'starting',
    }
    this.log = await this.d.openLog()
    this.d.out.attach(this.log)
    this.state.log = this.log.path
    this.log.event('run start', {
      pid: this.d.pid,
      agent: this.d.agents.impl.name,
      review_agent: this.d.agents.review.name,
      max_cycles: this.o.maxCycles,
      review_every: this.o.reviewEvery,
      review_threshold: this.o.reviewThreshold,
      auto_review: this.o.autoReview,
      auto_align: this.o.autoAlign,
      once: this.o.once ?? null,
    })
    this.d.out.normal(`helix: run started (agent=${this.d.agents.impl.name}, review=${this.d.agents.review.name}, log=${this.log.path})`)
    await this.save('starting')
    await this.d.recoverOrphans((line) => this.d.out.normal(line))
    const snap = await this.d.tracker.read()
    this.contextMd = await this.d.context(snap, null, true)
    await this.save('running')
    for (;;) {
      if (this.aborted) return this.interruptStop()
      const step = this.o.once ? await this.buildOnce() : await this.iterate()
      if (step instanceof Stop) return step
    }
  }

  // ---------------------------------------------------------------- selection

  private selectOpts(stale: Set<string>, focus: string | null) {
    return {
      skip: this.skipWithChildren(),
      backoffUntil: this.backoffUntil,
      now: this.now(),
      staleClaims: stale,
      focusedEpic: focus,
      exclude: this.exclude,
    }
  }

  /** skip list plus children of skipped (blocked) epics */
  private skipWithChildren(snap?: TrackerSnapshot): Set<string> {
    const out = new Set(this.skip.keys())
    if (snap) for (const b of snap.beads) if (b.parent && this.skip.has(b.parent)) out.add(b.id)
    return out
  }

  private async select(snap: TrackerSnapshot): Promise<Selection> {
    const stale = await this.d.tracker.staleClaims(snap)
    const base = {...this.selectOpts(stale, null), skip: this.skipWithChildren(snap)}
    if (this.focusedEpic) {
      const sel = selectTarget(snap, {...base, focusedEpic: this.focusedEpic})
      if (sel.target) return sel
      this.d.out.normal(`helix: releasing focus on epic ${this.focusedEpic} (no ready children)`)
      this.focusedEpic = null
    }
    const sel = selectTarget(snap, base)
    if (sel.epicFocus && this.skip.has(sel.epicFocus)) return {...sel, epicFocus: undefined}
    return sel
  }

  /** Focused epic with no open children left: close it (not a cycle), review, release. */
  private async maybeCloseFocusedEpic(snap: TrackerSnapshot): Promise<Step | 'none'> {
    const epicId = this.focusedEpic
    if (!epicId) return 'none'
    const epic = snap.byId.get(epicId)
    if (!epic || statusOf(epic) === 'closed' || this.skip.has(epicId)) {
      this.focusedEpic = null
      return 'none'
    }
    if (openChildIds(snap, epicId).size > 0) return 'none'
    this.d.out.normal(`helix: epic ${epicId} complete — closing`)
    try {
      await this.d.tracker.close(epicId)
      if (!this.state.closed_beads.includes(epicId)) this.state.closed_beads.push(epicId)
    } catch (error) {
      this.d.out.normal(`helix: could not close epic ${epicId}: ${(error as Error).message}`)
    }
    this.focusedEpic = null
    await this.save()
    if (this.o.autoReview) {
      const r = await this.review(epicId)
      if (r instanceof Stop) return r
    }
    return 'continue'
  }

  private async iterate(): Promise<Step> {
    const snap = await this.d.tracker.read()
    const closed = await this.maybeCloseFocusedEpic(snap)
    if (closed !== 'none') return closed
    const sel = await this.select(snap)
    if (!sel.target) {
      if (sel.waiting.length > 0) return this.waitBackoff(sel.waiting[0].until)
      if (this.exclude.size > 0 && this.idleSpins++ < 3) {
        this.exclude.clear()
        return 'continue'
      }
      return this.drain()
    }
    return this.cycle(snap, sel)
  }

  private async waitBackoff(until: string): Promise<Step> {
    const ms = Math.max(0, Date.parse(until) - this.now().getTime())
    this.d.out.normal(`helix: only backing-off issues remain; waiting ${Math.ceil(ms / 1000)}s`)
    await this.save('backoff')
    await this.d.sleep(ms, this.o.signal)
    if (this.aborted) return this.interruptStop()
    return 'continue'
  }

  // ------------------------------------------------------------------- cycle

  private async cycle(snap: TrackerSnapshot, sel: Selection): Promise<Step> {
    const target = sel.target as Bead
    if (sel.epicFocus && sel.epicFocus !== this.focusedEpic) {
      this.focusedEpic = sel.epicFocus
      this.d.out.normal(`helix: epic focus: ${sel.epicFocus} → child ${target.id}`)
      this.contextMd = await this.d.context(snap, this.focusedEpic, true)
    }
    const fp = fingerprint(target)
    const openChildrenBefore = openChildIds(snap, target.id)
    // revalidate on a fresh read: still ready, governance unchanged
    const fresh = await this.d.tracker.read()
    const freshBead = fresh.byId.get(target.id)
    const freshStale = await this.d.tracker.staleClaims(fresh)
    if (!freshBead || !readyList(fresh, freshStale).some((b) => b.id === target.id) || !sameFingerprint(fp, fingerprint(freshBead))) {
      this.d.out.normal(`helix: ${target.id} changed before claim; selecting again`)
      this.exclude.add(target.id)
      return 'continue'
    }
    const claim = await this.d.tracker.claim(target.id)
    if (!claim.ok) {
      this.d.out.normal(`helix: claim conflict on ${target.id} (${claim.message}); skipping it this iteration`)
      this.exclude.add(target.id)
      return 'continue'
    }
    this.exclude.clear()
    this.idleSpins = 0
    this.buildStreak = 0
    this.drainStreak = 0
    this.alignedSinceBuild = false
    this.backfilledSinceBuild = false
    const n = this.state.attempted_cycles + 1
    this.state.attempted_cycles = n
    this.state.current_cycle = n
    this.state.current_bead = target.id
    const startedAt = this.now()
    this.state.current_bead_started_at = startedAt.toISOString()
    this.inFlight = {id: target.id, token: claim.token}
    await this.save('implementing')
    const ready = sel.ready.length
    const batchIds = sel.batch.map((b) => b.id)
    const batchNote = batchIds.length > 0 ? `, batch=${batchIds.length + 1} issues (${[target.id, ...batchIds].join(', ')})` : ''
    this.d.out.normal(`helix: [${this.t()}] ready=${ready}, cycle=${n}, issue=${target.id}${batchNote}`)
    this.d.out.summary(`helix: [${this.t()}] cycle ${n}: ${target.id} (${ready} ready)`)
    // the worktree marker only matters when a review may be sized by it
    const mark = this.o.autoReview && this.o.reviewThreshold > 0 ? await this.d.gates.mark() : null
    const prompt = await this.d.agents.prompt('implementation', {
      beadId: target.id,
      ...(batchIds.length > 0 ? {batchIds} : {}),
      contextMd: this.contextMd,
    })
    const res = await this.dispatch(this.d.agents.impl, 'implementation', prompt, target.id, claim.token)
    if (this.aborted) return this.interruptStop()
    const after = await this.d.tracker.read()
    const {outcome, bead, newChildren} = classifyOutcome({after, id: target.id, fingerprint: fp, openChildrenBefore, rc: res.rc, timedOut: res.timedOut})
    const ended = this.now()
    const record = (o: CycleOutcome) => {
      this.state.cycles.push({
        n,
        bead: target.id,
        outcome: o,
        started_at: startedAt.toISOString(),
        ended_at: ended.toISOString(),
        duration_ms: ended.getTime() - startedAt.getTime(),
        tokens: res.tokens,
        rc: res.rc,
      })
    }
    for (const id of batchIds) {
      const b = after.byId.get(id)
      if (b && statusOf(b) === 'closed' && !this.state.closed_beads.includes(id)) this.state.closed_beads.push(id)
    }
    this.log?.event('cycle outcome', {cycle: n, bead: target.id, outcome, rc: res.rc, timed_out: res.timedOut})
    switch (outcome) {
      case 'COMPLETE':
      case 'SALVAGED':
        record(outcome)
        return this.completed(n, target, outcome, res, mark)
      case 'DRIFT_CLOSED':
      case 'DRIFT': {
        record('DRIFT')
        if (!bead) {
          this.d.out.both(`helix: queue drift detected for ${target.id}: bead disappeared`)
        } else {
          this.log?.event('drift fields', {bead: target.id, fields: fingerprintDiff(fp, fingerprint(bead))})
          this.d.out.both(`helix: queue drift detected for ${target.id}; refusing stale completion`)
          if (outcome === 'DRIFT_CLOSED') await this.d.tracker.reopen(target.id, `helix: reopened — ${DRIFT_REASON} (cycle ${n})`)
          else await this.releaseClaim(after, target.id, claim.token)
        }
        this.inFlight = null
        this.skip.set(target.id, {reason: DRIFT_REASON, attempts: this.state.attempts[target.id] ?? 0})
        await this.endCycle()
        return 'continue'
      }
      case 'DECOMPOSED': {
        record('DECOMPOSED')
        await this.releaseClaim(after, target.id, claim.token)
        await this.d.tracker.setFields(target.id, {issue_type: 'epic'})
        this.inFlight = null
        this.d.out.normal(`helix: promoting ${target.id} to epic (agent created ${newChildren.length} children)`)
        this.focusedEpic = target.id
        this.contextMd = await this.d.context(await this.d.tracker.read(), this.focusedEpic, true)
        await this.endCycle()
        return 'continue'
      }
      case 'FAILED':
      case 'NOT_COMPLETED':
        record(outcome)
        await this.releaseClaim(after, target.id, claim.token)
        this.inFlight = null
        return this.failed(n, target, outcome)
    }
  }

  /** unclaim only while the claim is still ours (fencing token) */
  private async releaseClaim(snap: TrackerSnapshot, id: string, token: string): Promise<void> {
    const b = snap.byId.get(id)
    if (!b || statusOf(b) !== 'in_progress') return
    if (b['claim-token'] !== undefined && b['claim-token'] !== token) return
    await this.d.tracker.unclaim(id)
  }

  private async endCycle(): Promise<void> {
    this.state.current_bead = null
    this.state.current_bead_started_at = null
    await this.save('running')
  }

  private async failed(n: number, target: Bead, outcome: 'FAILED' | 'NOT_COMPLETED'): Promise<Step> {
    const id = target.id
    const a = (this.state.attempts[id] ?? 0) + 1
    this.state.attempts[id] = a
    const prevAllFailed = this.lastFailure.get(id)
    // "failed attempts" only when every attempt failed; a mix ending in non-completion is "non-completing"
    this.lastFailure.set(id, a === 1 ? outcome : prevAllFailed === 'FAILED' && outcome === 'FAILED' ? 'FAILED' : 'NOT_COMPLETED')
    if (outcome === 'FAILED') this.d.out.normal(`helix: implementation failed during cycle ${n} (will not count toward completed cycles)`)
    else this.d.out.normal(`helix: cycle ${n} did not complete a tracked issue; completed cycles remain ${this.state.completed_cycles}`)
    this.d.out.summary(`helix: [${this.t()}] cycle ${n}: FAILED`)
    await this.endCycle()
    await this.d.recoverOrphans((line) => this.d.out.normal(line))
    if (a >= BLOCK_AFTER_ATTEMPTS) {
      const allFailed = this.lastFailure.get(id) === 'FAILED'
      this.d.out.normal(`helix: blocking ${id} after ${a} ${allFailed ? 'failed' : 'non-completing'} attempts`)
      await this.block(id, allFailed ? FAILED_REASON : NONCOMPLETE_REASON, a)
      delete this.backoffUntil[id]
      if (this.focusedEpic && target.parent === this.focusedEpic) {
        const epic = this.focusedEpic
        this.focusedEpic = null
        await this.block(epic, `child ${id} intractable after ${a} attempts`, this.state.attempts[epic] ?? 0)
      }
    } else {
      const secs = backoffSeconds(a, this.d.env)
      this.backoffUntil[id] = new Date(this.now().getTime() + secs * 1000).toISOString()
      this.log?.event('backoff', {bead: id, attempts: a, seconds: secs})
    }
    await this.save('running')
    return 'continue'
  }

  /** skip list + label `blocked` added + note appended once */
  private async block(id: string, reason: string, attempts: number): Promise<void> {
    this.skip.set(id, {reason, attempts})
    this.d.out.summary(`helix: [${this.t()}] BLOCKED ${id} after ${attempts} attempts`)
    const snap = await this.d.tracker.read()
    const b = snap.byId.get(id)
    if (!b) return
    if (!(b.labels ?? []).includes('blocked')) await this.d.tracker.addLabel(id, 'blocked')
    const already = (b.notes ?? '').split('\n').some((line) => line.startsWith('BLOCKED [') && line.endsWith(`]: ${reason}`))
    if (!already) await this.d.tracker.appendNote(id, `BLOCKED [${this.now().toISOString()}]: ${reason}`)
  }

  private async completed(n: number, target: Bead, outcome: 'COMPLETE' | 'SALVAGED', res: DispatchResult, mark: string | null): Promise<Step> {
    this.inFlight = null
    const c = this.state.completed_cycles + 1
    if (!this.state.closed_beads.includes(target.id)) this.state.closed_beads.push(target.id)
    delete this.backoffUntil[target.id]
    if (outcome === 'COMPLETE') {
      this.d.out.both(`helix: [${this.t()}] cycle ${n}: ${target.id} → COMPLETE (${c}/${this.state.attempted_cycles} done, ${this.state.total_tokens} tokens)`)
    } else {
      this.d.out.both(`helix: [${this.t()}] cycle ${n}: ${target.id} → SALVAGED (agent rc=${res.rc} but issue closed)`)
    }
    this.state.current_bead = null
    this.state.current_bead_started_at = null
    await this.acceptanceGate(n, target.id)
    if (this.o.autoReview && (await this.reviewWanted(mark))) {
      const r = await this.review(target.id, n)
      if (r instanceof Stop) return r
    }
    this.state.completed_cycles = c
    await this.save('running')
    if (c % 5 === 0) this.contextMd = await this.d.context(await this.d.tracker.read(), this.focusedEpic, true)
    if (this.o.reviewEvery > 0 && c % this.o.reviewEvery === 0 && !this.o.once) {
      this.d.out.normal(`helix: periodic alignment after ${c} completed cycles`)
      const ok = await this.runAction('alignment', 'repo')
      if (this.aborted) return this.interruptStop()
      if (!ok) return new Stop('error', 1, `helix: periodic alignment failed after ${c} cycles`)
      this.alignedSinceBuild = true
    }
    if (this.o.maxCycles > 0 && c >= this.o.maxCycles) {
      // closing a finished epic is not a cycle: do it before stopping, or it would stay open
      // (an epic with children is never ready, so no later run would get back to it)
      const r = await this.maybeCloseFocusedEpic(await this.d.tracker.read())
      if (r instanceof Stop) return r
      return new Stop('max_cycles', 0, `helix: reached max cycles (${this.o.maxCycles})`)
    }
    return 'continue'
  }

  private async reviewWanted(mark: string | null): Promise<boolean> {
    if (this.o.reviewThreshold <= 0) return true
    const changed = await this.d.gates.changedSince(mark)
    if (!changed) {
      this.log?.event('review skipped: change size unknown (not a git worktree?)')
      return false
    }
    this.log?.event('change since cycle start', {...changed})
    return changed.lines >= this.o.reviewThreshold || changed.files >= 3
  }

  private async acceptanceGate(n: number, id: string): Promise<void> {
    const scripts = await this.d.gates.acceptanceScripts()
    if (scripts.length === 0) return
    const failures: string[] = []
    for (const s of scripts) {
      const rc = await this.d.gates.runScript(s)
      this.log?.event('acceptance script', {script: s, rc})
      if (rc !== 0) failures.push(s)
    }
    if (failures.length === 0) return
    const snap = await this.d.tracker.read()
    const target = snap.byId.get(id)
    const isOpen = (b: Bead) => statusOf(b) !== 'closed' && statusOf(b) !== 'cancelled'
    const isFailureBead = (b: Bead | undefined, name: string) => !!b && (b.labels ?? []).includes('acceptance-failure') && b['spec-id'] === name
    for (const s of failures) {
      const name = s.split('/').pop() as string
      const title = `Acceptance failure: ${name} after ${id}`
      // de-duplicate: an open bead with this title, or any open failure bead for the same script;
      // and never chain a new failure bead off a closed failure bead for the same script
      const exists = snap.beads.some((b) => isOpen(b) && (b.title === title || isFailureBead(b, name)))
      if (exists || isFailureBead(target, name)) continue
      const newId = await this.d.tracker.create({
        title,
        labels: ['helix', 'acceptance-failure'],
        'spec-id': name,
        acceptance: `${name} passes cleanly`,
      })
      this.state.injected_supervisory = [
        ...(this.state.injected_supervisory ?? []),
        {id: newId, type: 'acceptance-failure', triggering_cycle: n, triggering_bead: id, created_at: this.now().toISOString()},
      ]
    }
    this.d.out.normal(`helix: acceptance criteria not met after cycle ${n} — failures filed as tracker issues`)
    await this.save()
  }

  /** post-implementation (or epic) review; unreadable review stops the run */
  private async review(id: string, n?: number): Promise<Step> {
    this.d.out.normal(`helix: [${this.t()}] post-implementation review of ${id}`)
    const before = await this.d.tracker.read()
    const prompt = await this.d.agents.prompt('review', {scope: id})
    await this.save('reviewing')
    const res = await this.dispatch(this.d.agents.review, 'review', prompt, id)
    if (this.aborted) return this.interruptStop()
    const status = trailerValue(res.text, 'REVIEW_STATUS', REVIEW_STATUS)
    if (!status) return new Stop('error', 1, 'helix: review output missing REVIEW_STATUS trailer')
    if (status === 'ISSUES_FOUND') {
      const count = trailerInt(res.text, 'ISSUES_COUNT') ?? 0
      const filed = trailerInt(res.text, 'FINDINGS_FILED') ?? 0
      this.d.out.normal(`helix: review reported ${count} issue(s), ${filed} filed as tracker issues`)
      const after = await this.d.tracker.read()
      for (const b of after.beads) {
        if (before.byId.has(b.id) || !(b.labels ?? []).includes('review-finding')) continue
        this.state.injected_supervisory = [
          ...(this.state.injected_supervisory ?? []),
          {id: b.id, type: 'review-finding', triggering_cycle: n ?? this.state.current_cycle, triggering_bead: id, created_at: this.now().toISOString()},
        ]
      }
    }
    await this.save('running')
    return 'continue'
  }

  // ------------------------------------------------------------- dispatching

  private async dispatch(agent: AgentSpec, action: ActionName, prompt: string, beadId?: string, claimToken?: string): Promise<DispatchResult> {
    const log = this.log as SessionLogLike
    const res = await this.d.agents.dispatch({
      agent,
      action,
      prompt,
      log,
      ...(beadId ? {beadId} : {}),
      ...(claimToken ? {claimToken} : {}),
      onLine: (line) => this.d.out.agent(line),
      ...(this.o.signal ? {signal: this.o.signal} : {}),
    })
    this.state.total_tokens += res.tokens
    const range = res.logRange ? `${res.logRange.first}–${res.logRange.last}` : 'none'
    const secs = Math.round(res.durationMs / 1000)
    if (res.timedOut) this.d.out.normal(`helix: [${this.t()}] ${agent.name} timeout after ${this.o.timeoutSec ?? '?'}s — killed`)
    this.d.out.summary(`helix: [${this.t()}] ${agent.name} complete (rc=${res.rc}, ${secs}s, ${res.tokens} tokens) — log ${range} in ${log.path}`)
    this.d.out.normal(`helix: [${this.t()}] ${agent.name} ${action} finished (rc=${res.rc}, ${secs}s, ${res.tokens} tokens)`)
    return res
  }

  /** a drain/periodic action; true when it succeeded */
  private async runAction(action: 'alignment' | 'plan' | 'polish' | 'backfill', scope: string): Promise<boolean> {
    const prompt = await this.d.agents.prompt(action, {scope})
    await this.save(action)
    const res = await this.dispatch(this.d.agents.impl, action, prompt)
    await this.save('running')
    if (res.rc !== 0 || res.timedOut) return false
    if (action === 'backfill') {
      const status = trailerValue(res.text, 'BACKFILL_STATUS', BACKFILL_STATUS)
      const report = trailerValue(res.text, 'BACKFILL_REPORT')
      if (!status || !(BACKFILL_SUCCESS as readonly string[]).includes(status) || !report) return false
      return this.d.gates.exists(report)
    }
    return true
  }

  // -------------------------------------------------------------- queue drain

  private async anySelectable(): Promise<boolean> {
    const snap = await this.d.tracker.read()
    const stale = await this.d.tracker.staleClaims(snap)
    const s = selectableBeads(snap, {...this.selectOpts(stale, null), skip: this.skipWithChildren(snap)})
    return s.selectable.length > 0 || s.waiting.length > 0
  }

  private async drain(): Promise<Step> {
    this.exclude.clear()
    const prompt = await this.d.agents.prompt('check', {scope: 'repo'})
    await this.save('check')
    const res = await this.dispatch(this.d.agents.impl, 'check', prompt)
    await this.save('running')
    if (this.aborted) return this.interruptStop()
    if (res.rc !== 0 || res.timedOut) return new Stop('error', 1, 'helix: check failed after queue drain')
    const code = trailerValue(res.text, 'NEXT_ACTION', NEXT_ACTION_CODES)
    if (!code) return new Stop('error', 1, 'helix: unable to determine NEXT_ACTION from check output')
    this.log?.event('check', {next_action: code})
    const stopAfter = () => new Stop('completed', 0, `helix: stopping after check returned ${code}`)
    const bounded = async (action: 'plan' | 'polish' | 'alignment', label: string): Promise<Step> => {
      if (this.drainStreak >= 3) return new Stop('completed', 0, `helix: stopping: check returned ${code} 3 times without new ready work`)
      this.d.out.normal(`helix: queue drained, running ${label}`)
      const ok = await this.runAction(action, 'repo')
      if (this.aborted) return this.interruptStop()
      if (!ok) return new Stop('error', 1, `helix: ${label} failed after queue drain`)
      if (action === 'alignment') this.alignedSinceBuild = true
      this.drainStreak++
      return 'continue'
    }
    switch (code) {
      case 'BUILD': {
        this.buildStreak++
        if (this.buildStreak < 2) return 'continue'
        const rec = await this.d.recoverOrphans((line) => this.d.out.normal(line))
        this.buildStreak = 0
        if (rec.recovered.length > 0) return 'continue'
        return new Stop('completed', 0, 'helix: no selectable issues after orphan recovery — stopping')
      }
      case 'DESIGN':
        return bounded('plan', 'design')
      case 'POLISH':
        return bounded('polish', 'polish')
      case 'ALIGN':
        if (this.o.autoAlign && !this.alignedSinceBuild) return bounded('alignment', 'alignment')
        return stopAfter()
      case 'BACKFILL': {
        if (this.backfilledSinceBuild) return stopAfter()
        this.d.out.normal('helix: queue drained, running backfill')
        const ok = await this.runAction('backfill', 'repo')
        if (this.aborted) return this.interruptStop()
        if (!ok) return new Stop('error', 1, 'helix: backfill failed after queue drain')
        this.backfilledSinceBuild = true
        return 'continue'
      }
      case 'STOP': {
        if (!this.o.autoAlign || this.alignedSinceBuild) return stopAfter()
        this.d.out.normal('helix: queue empty, running alignment before stopping')
        const ok = await this.runAction('alignment', 'repo')
        if (this.aborted) return this.interruptStop()
        if (!ok) return new Stop('error', 1, 'helix: alignment failed after queue drain')
        this.alignedSinceBuild = true
        if (await this.anySelectable()) return 'continue'
        return stopAfter()
      }
      default:
        return stopAfter()
    }
  }

  // ------------------------------------------------------------ helix build

  private async buildOnce(): Promise<Step> {
    const snap = await this.d.tracker.read()
    const stale = await this.d.tracker.staleClaims(snap)
    const opts = {...this.selectOpts(stale, null), skip: this.skipWithChildren(snap)}
    const selector = this.o.once?.selector
    let sel: Selection
    if (selector) {
      const {ready, selectable} = selectableBeads(snap, opts)
      const needle = selector.toLowerCase()
      const match =
        selectable.find((b) => b.id === selector) ??
        selectable.find((b) => b.parent === selector || b['spec-id'] === selector || (b.labels ?? []).includes(selector)) ??
        selectable.find((b) => (b.title ?? '').toLowerCase().includes(needle))
      if (!match) return new Stop('error', 1, `helix: no ready issue matches '${selector}'`)
      sel = {target: match, tier: null, batch: [], ready, waiting: []}
    } else {
      sel = selectTarget(snap, opts)
      if (!sel.target) return new Stop('completed', 0, 'helix: no ready issues')
      sel = {...sel, epicFocus: undefined, batch: []}
    }
    const before = this.state.completed_cycles
    const attemptedBefore = this.state.attempted_cycles
    const step = await this.cycle(snap, sel)
    if (step instanceof Stop) return step
    if (this.state.attempted_cycles === attemptedBefore) {
      // claim conflict or change before claim: nothing was attempted
      return new Stop('error', 3, `helix: could not claim ${sel.target!.id}`)
    }
    if (this.state.completed_cycles > before) {
      // the built bead may have been its epic's last open child: close the epic (not a cycle)
      const parent = sel.target!.parent
      const snapAfter = await this.d.tracker.read()
      const epic = parent ? snapAfter.byId.get(parent) : undefined
      if (epic && isEpicBead(epic) && !this.skip.has(epic.id)) {
        this.focusedEpic = epic.id
        const r = await this.maybeCloseFocusedEpic(snapAfter)
        this.focusedEpic = null
        if (r instanceof Stop) return r
      }
      return new Stop('completed', 0)
    }
    return new Stop('completed', 1, `helix: build did not complete ${sel.target!.id}`)
  }

  // -------------------------------------------------------------------- stop

  private async finish(stop: Stop): Promise<LoopResult> {
    const s = this.state
    if (!s) {
      // failed before the run state existed (agent check)
      if (stop.message) this.d.out.both(stop.message)
      return {exitCode: stop.exitCode, stopReason: stop.reason}
    }
    if (this.inFlight) {
      try {
        const snap = await this.d.tracker.read()
        await this.releaseClaim(snap, this.inFlight.id, this.inFlight.token)
      } catch (error) {
        this.log?.event('unclaim failed', {bead: this.inFlight.id, error: String(error)}, 'error')
      }
      this.inFlight = null
    }
    if (stop.message) this.d.out.both(stop.message)
    let reason = stop.reason
    if (reason === 'completed' && this.skip.size > 0 && !this.o.once) reason = 'blocked'
    this.d.out.both(
      `helix: ═══ run complete: ${s.attempted_cycles} attempted, ${s.completed_cycles} completed, ${this.skip.size} skipped, ${s.total_tokens} tokens ═══`,
    )
    if (this.skip.size > 0) {
      this.d.out.both(`helix: BLOCKERS (${this.skip.size} issues):`)
      const entries: BlockerEntry[] = []
      let snap: TrackerSnapshot | null = null
      try {
        snap = await this.d.tracker.read()
      } catch {
        snap = null
      }
      for (const [id, info] of this.skip) {
        this.d.out.both(`helix:   ${id} — ${info.reason}`)
        entries.push({id, title: snap?.byId.get(id)?.title ?? '', reason: info.reason, attempts: info.attempts})
      }
      try {
        const file = await this.d.blockerReport({
          now: this.now(),
          attempted: s.attempted_cycles,
          completed: s.completed_cycles,
          logPath: this.log?.path ?? null,
          entries,
        })
        this.d.out.normal(`helix: blocker report: ${file}`)
      } catch (error) {
        this.log?.event('blocker report failed', {error: String(error)}, 'error')
      }
    }
    const ended = this.now()
    s.stop_reason = reason
    s.current_bead = null
    s.current_bead_started_at = null
    s.last_run = {
      started_at: s.started_at ?? ended.toISOString(),
      ended_at: ended.toISOString(),
      attempted_cycles: s.attempted_cycles,
      completed_cycles: s.completed_cycles,
      total_tokens: s.total_tokens,
      stop_reason: reason,
    }
    try {
      await this.save('stopped')
    } catch {
      // nothing more we can do; the exit code still tells the truth
    }
    this.log?.event('run complete', {stop_reason: reason, exit_code: stop.exitCode})
    this.log?.close()
    return {exitCode: stop.exitCode, stopReason: reason}
  }
}

// ------------------------------------------------------------------- dry run

/** SPEC 4 `--dry-run`: print the first dispatch's command line and prompt; change nothing. */
async function dryRun(deps: LoopDeps, opts: LoopOptions): Promise<LoopResult> {
  deps.agents.check()
  const snap = await deps.tracker.read()
  const stale = await deps.tracker.staleClaims(snap)
  let sel = selectTarget(snap, {now: deps.clock.now(), staleClaims: stale})
  if (opts.once?.selector) {
    const needle = opts.once.selector
    const {selectable} = selectableBeads(snap, {now: deps.clock.now(), staleClaims: stale})
    const match =
      selectable.find((b) => b.id === needle) ??
      selectable.find((b) => b.parent === needle || b['spec-id'] === needle || (b.labels ?? []).includes(needle)) ??
      selectable.find((b) => (b.title ?? '').toLowerCase().includes(needle.toLowerCase()))
    if (!match) {
      deps.out.both(`helix: no ready issue matches '${needle}'`)
      return {exitCode: 1, stopReason: null}
    }
    sel = {...sel, target: match, batch: []}
  }
  let action: ActionName
  let prompt: string
  if (sel.target) {
    action = 'implementation'
    const contextMd = await deps.context(snap, sel.epicFocus ?? null, false)
    const batchIds = opts.once ? [] : sel.batch.map((b) => b.id)
    prompt = await deps.agents.prompt('implementation', {beadId: sel.target.id, ...(batchIds.length ? {batchIds} : {}), contextMd})
  } else {
    action = 'check'
    prompt = await deps.agents.prompt('check', {scope: 'repo'})
  }
  deps.out.stdout(deps.agents.describe(deps.agents.impl, action, prompt) + '\n')
  deps.out.stdout('--- prompt ---\n' + prompt + (prompt.endsWith('\n') ? '' : '\n'))
  return {exitCode: 0, stopReason: null}
}
