/**
 * One run (SPEC 5): the bookkeeping every part of the loop shares (skip list,
 * backoff, epic focus, streaks), the start, and the stop. The scheduler
 * (scheduler.ts) decides what happens next; an attempt (attempt.ts) is one bead's
 * lifecycle; the ledger (ledger.ts) owns run-state.
 */
import type {SessionLogLike} from '../agents/types.js'
import type {RunHistoryRecord, StopReason} from '../state/types.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import {HelixError, helixMessage, errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {hhmmss} from '../util/time.js'
import {SystemicDetector} from './systemic.js'
import {RunLedger, type SkipEntry} from './ledger.js'
import {holdsDispatch} from './quota-state.js'
import type {BlockerEntry, LoopDeps, LoopOptions, LoopResult, NotifyEventName} from './ports.js'
import {runScheduler} from './scheduler.js'
import {reconcile} from './reconcile.js'
import {statusOf} from './selection.js'
import type {InFlight, RunScope} from './scope.js'
import {Stop, interruptStop} from './stop.js'
import {groupDigits} from '../util/numbers.js'

/** A blocker's title when the tracker could not be read at the end of the run (its id and reason are still reported). */
export const TITLE_UNKNOWN = '(title unknown: the tracker could not be read)'

export type {InFlight} from './scope.js'

export class Run implements RunScope {
  readonly ledger: RunLedger
  log: SessionLogLike | null = null
  /** beads left out of the next selection (claim conflicts, changed before claim); the scheduler clears it */
  readonly exclude = new Set<string>()
  /** slot → the bead it holds claimed */
  readonly inFlight = new Map<number, InFlight>()
  readonly systemic = new SystemicDetector()
  contextMd = ''
  /** completed count a periodic alignment is due at (workers > 1: runs once every slot is idle) */
  alignDue: number | null = null
  readonly workers: number

  constructor(
    readonly d: LoopDeps,
    readonly o: LoopOptions,
  ) {
    this.workers = Math.max(1, o.workers ?? 1)
    this.ledger = new RunLedger(d)
  }

  /** the run's skip list (written through `ledger.skip`) */
  get skip(): ReadonlyMap<string, SkipEntry> {
    return this.ledger.skipped
  }

  get backoffUntil(): Readonly<Record<string, string>> {
    return this.ledger.backoffUntil
  }

  get focusedEpic(): string | null {
    return this.ledger.focusedEpic
  }

  /** a quota pause holds every slot */
  get pausing(): boolean {
    return holdsDispatch(this.ledger.quota)
  }

  now(): Date {
    return this.d.clock.now()
  }

  t(): string {
    return hhmmss(this.now())
  }

  get aborted(): boolean {
    return this.o.signal?.aborted === true
  }

  /** `w2 ` with workers > 1, '' with one (SPEC 15.4: N=1 keeps today's lines) */
  slotTag(slot: number): string {
    return this.workers > 1 ? `w${slot} ` : ''
  }

  async notify(event: NotifyEventName, fields: Record<string, unknown>): Promise<void> {
    if (!this.d.notify) return
    try {
      await this.d.notify.send({event, at: this.now().toISOString(), ...fields})
    } catch (error) {
      this.log?.event('notify failed', {event, error: String(error)}, 'warn')
    }
  }

  async run(): Promise<LoopResult> {
    let stop: Stop
    try {
      stop = await this.main()
    } catch (error) {
      stop = this.errorStop(error)
    }
    return this.finish(stop)
  }

  /**
   * An exception that reached the loop. A HelixError (bad input, a tracker that can't be
   * written, a lost claim) is one line with its own exit code. Anything else is a bug:
   * one line naming the session log, and the stack in that log. Either way the run ends
   * like any other stop: attempts in flight end their own way, in-flight claims are
   * released and worktrees preserved (finish).
   */
  errorStop(error: unknown): Stop {
    if (this.aborted) return interruptStop(this.o.signal)
    if (error instanceof HelixError) {
      const line = helixMessage(sanitize(error.message.split('\n')[0] ?? ''))
      return new Stop({reason: 'error', exit: error.exitCode}, line, line.replace(/^helix: /, ''))
    }
    const first = sanitize(errorMessage(error).split('\n')[0] ?? '').slice(0, 300)
    const stack = error instanceof Error && typeof error.stack === 'string' ? error.stack : String(error)
    this.log?.event('internal error (a bug in helix)', {error: errorMessage(error), stack}, 'error')
    const where = this.log ? `the stack is in ${sanitize(this.log.path)}` : 'no session log was open yet'
    return new Stop({reason: 'error', bug: true}, `helix: internal error: ${first} (a bug in helix; ${where})`, `internal error: ${first}`)
  }

  private async main(): Promise<Stop> {
    // SPEC 13.4: a malformed tracker stops the run before anything is written
    const first = await this.d.tracker.read()
    const prev = await this.d.state.load()
    const agent = this.d.agents.impl.name
    const review = this.d.agents.review.name
    this.ledger.begin(prev, {agent, review_agent: review, max_cycles: this.o.maxCycles > 0 ? this.o.maxCycles : null, ...(this.o.sandboxed ? {sandboxed: true} : {})})
    this.log = await this.d.openLog()
    this.d.out.attach(this.log)
    this.ledger.setLog(this.log.path)
    this.log.event('run start', {
      pid: this.d.pid,
      agent,
      review_agent: review,
      max_cycles: this.o.maxCycles,
      review_every: this.o.reviewEvery,
      review_threshold: this.o.reviewThreshold,
      auto_review: this.o.autoReview,
      auto_align: this.o.autoAlign,
      once: this.o.once ?? null,
      workers: this.workers,
    })
    this.d.out.normal(`helix: run started (agent=${sanitize(agent)}, review=${sanitize(review)}${this.workers > 1 ? `, workers=${this.workers}` : ''}, log=${this.log.path})`)
    await this.ledger.save('starting')
    this.ignoreRuntime()
    const rec = await this.d.recoverOrphans((line) => this.d.out.normal(line))
    const snap = rec.recovered.length > 0 ? await this.d.tracker.read() : first
    this.contextMd = await this.d.context(snap, null, true)
    // SPEC 18.2: finish, preserve or remove what dead runs left, before the first selection
    const settled = await reconcile(this)
    if (settled instanceof Stop) return settled
    await this.ledger.save('running')
    return runScheduler(this)
  }

  /** SPEC 16.1: the runtime lines go to .gitignore, said once */
  private ignoreRuntime(): void {
    if (!this.d.ignoreRuntime) return
    try {
      const added = this.d.ignoreRuntime()
      if (added.length > 0) this.d.out.normal(`helix: added helix's runtime paths to .gitignore (${added.join(' ')})`)
    } catch (error) {
      this.log?.event('could not update .gitignore', {error: String(error)}, 'warn')
      this.d.out.normal(`helix: could not add helix's runtime paths to .gitignore: ${sanitize(errorMessage(error))}`)
    }
  }

  /** unclaim only while the claim is still ours (fencing token) */
  async releaseClaim(snap: TrackerSnapshot, id: string, token: string): Promise<void> {
    const b = snap.byId.get(id)
    if (!b || statusOf(b) !== 'in_progress') return
    if (b['claim-token'] !== undefined && b['claim-token'] !== token) return
    await this.d.tracker.unclaim(id)
  }

  // -------------------------------------------------------------------- stop

  private async finish(stop: Stop): Promise<LoopResult> {
    // landed attempts' worktrees and branches are gone before the run says it is over
    await this.d.landing?.settled?.().catch((error: unknown) => this.log?.event('landing cleanup failed', {error: errorMessage(error)}, 'error'))
    if (!this.ledger.started) {
      // failed before the run state existed (malformed tracker): the error is all that is printed
      if (stop.message) this.d.out.both(stop.message)
      return {exitCode: stop.exitCode, stopReason: stop.reason}
    }
    const s = this.ledger.state
    if (this.inFlight.size > 0) {
      let snap: TrackerSnapshot | null = null
      try {
        snap = await this.d.tracker.read()
      } catch (error) {
        this.log?.event('unclaim failed', {error: String(error)}, 'error')
      }
      for (const [slot, f] of this.inFlight) {
        try {
          if (snap) await this.releaseClaim(snap, f.id, f.token)
        } catch (error) {
          this.log?.event('unclaim failed', {bead: f.id, error: String(error)}, 'error')
        }
        this.inFlight.delete(slot)
      }
    }
    if (stop.message) this.d.out.both(stop.message)
    let reason: StopReason = stop.reason
    if (reason === 'completed' && this.skip.size > 0 && !this.o.once) reason = 'blocked'
    const tokens = s.total_tokens
    const cost = s.total_cost_usd ?? 0
    this.d.out.both(
      `helix: ═══ run complete: ${s.attempted_cycles} attempted, ${s.completed_cycles} completed, ${this.skip.size} skipped, ${groupDigits(tokens)} tokens${cost > 0 ? `, $${cost.toFixed(2)}` : ''}${this.d.awaitingMerge ? `, ${this.d.awaitingMerge()} awaiting merge` : ''} ═══`,
    )
    const entries: BlockerEntry[] = []
    if (this.skip.size > 0) {
      this.d.out.both(`helix: BLOCKERS (${this.skip.size} issue${this.skip.size === 1 ? '' : 's'}):`)
      let snap: TrackerSnapshot | null = null
      try {
        snap = await this.d.tracker.read()
      } catch (error) {
        // the ids and reasons are what the operator acts on: keep them, and say the titles are unknown and why
        this.d.out.both(`helix: cannot read the tracker for blocker titles: ${sanitize(errorMessage(error))}`)
        this.log?.event('blocker titles unavailable', {error: errorMessage(error)}, 'error')
      }
      for (const [id, info] of this.skip) {
        this.d.out.both(`helix:   ${sanitize(id)} — ${sanitize(info.reason)}`)
        const title = snap ? (snap.byId.get(id)?.title ?? '') : TITLE_UNKNOWN
        entries.push({id, title, reason: info.reason, attempts: info.attempts})
      }
      try {
        const file = await this.d.blockerReport({now: this.now(), attempted: s.attempted_cycles, completed: s.completed_cycles, logPath: this.log?.path ?? null, entries})
        this.d.out.normal(`helix: blocker report: ${file}`)
      } catch (error) {
        this.log?.event('blocker report failed', {error: String(error)}, 'error')
      }
    }
    const ended = this.now()
    // the reason in words for status and report (not just `Stopped: error`)
    this.ledger.stop(reason, stop.detail ?? stop.message?.replace(/^helix: /, '') ?? null, ended)
    try {
      await this.ledger.settle()
      await this.ledger.save('stopped')
    } catch (error) {
      // the run is ending either way and the exit code still tells the truth; say why status may be stale
      this.d.out.both(`helix: cannot save the final run state: ${sanitize(errorMessage(error))}`)
      this.log?.event('run state not saved', {error: errorMessage(error)}, 'error')
    }
    await this.appendHistory(reason, stop.exitCode, ended, entries)
    // never fatal: the run is over, this line only says whether to commit the tracker
    // only worktree attempts leave it so (one worker: the agent's own commits carry it; --remote: the queue is the remote's)
    const worktrees = (this.workers > 1 || this.d.alwaysWorktree === true) && this.d.landing !== undefined && this.d.landing.remote === undefined
    const note = worktrees ? await this.d.trackerFileNote?.().catch(() => null) : null
    if (note) this.d.out.both(note)
    await this.notify('run_stopped', {
      stop_reason: reason,
      exit_code: stop.exitCode,
      message: stop.detail ?? stop.message ?? null,
      attempted: s.attempted_cycles,
      completed: s.completed_cycles,
      tokens,
      cost_usd: cost,
      blockers: entries,
    })
    this.log?.event('run complete', {stop_reason: reason, exit_code: stop.exitCode, message: stop.detail ?? null})
    this.log?.close()
    return {exitCode: stop.exitCode, stopReason: reason}
  }

  private async appendHistory(reason: StopReason, exitCode: number, ended: Date, blockers: BlockerEntry[]): Promise<void> {
    if (!this.d.history) return
    const s = this.ledger.state
    const record: RunHistoryRecord = {
      v: 1,
      started_at: s.started_at ?? ended.toISOString(),
      ended_at: ended.toISOString(),
      flags: this.o.flags ?? {},
      agent: s.agent,
      review_agent: s.review_agent,
      workers: this.workers,
      attempted: s.attempted_cycles,
      completed: s.completed_cycles,
      tokens: s.total_tokens,
      cost_usd: s.total_cost_usd ?? 0,
      stop_reason: reason,
      stop_message: s.stop_message ?? null,
      exit_code: exitCode,
      paused_ms: this.ledger.pausedMs,
      idle_ms: this.ledger.idleMs,
      cycles: s.cycles.map((c) => ({
        n: c.n,
        slot: c.slot ?? 1,
        bead: c.bead,
        title: c.title ?? '',
        outcome: c.outcome,
        reason: c.reason ?? null,
        started_at: c.started_at,
        ended_at: c.ended_at,
        duration_ms: c.duration_ms,
        tokens: c.tokens,
        cost_usd: c.cost_usd ?? 0,
        commits: [...(c.commits ?? [])],
      })),
      blockers,
      log: this.log?.path ?? null,
    }
    try {
      await this.d.history.append(record)
    } catch (error) {
      this.log?.event('run history append failed', {error: String(error)}, 'error')
    }
  }
}
