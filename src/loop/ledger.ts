/**
 * The run ledger: the one owner of this run's state (SPEC 7.3, 16.4, 18.5). Its
 * fields are private; every change is a named operation (begin an attempt, end a
 * slot's attempt, record or amend a cycle, pause, stop…), and each operation on a
 * slot touches only that slot's records. `save` writes run-state; output updates
 * (`last_output`) are throttled on the clock port to about one write a second.
 */
import {emptyRunState} from '../state/run-state.js'
import type {CycleRecord, RunState, StopReason, WorkerState} from '../state/types.js'
import {START, nextDrain, type DrainEvent, type DrainState} from './drain-state.js'
import type {LoopDeps} from './ports.js'
import {HEALTHY, nextQuota, type QuotaEvent, type QuotaState} from './quota-state.js'

/** read-only all the way down: what the rest of the loop sees of the state */
export type Frozen<T> = T extends (infer U)[] ? ReadonlyArray<Frozen<U>> : T extends object ? {readonly [K in keyof T]: Frozen<T[K]>} : T

const OUTPUT_WRITE_MS = 1000

export interface SkipEntry {
  reason: string
  attempts: number
}

/** what a cycle record may still learn after it was recorded (the landing's commits, its end) */
export type CycleAmendment = Partial<Pick<CycleRecord, 'outcome' | 'reason' | 'commits'>>

export class RunLedger {
  #s: RunState | undefined
  readonly #skip = new Map<string, SkipEntry>()
  readonly #backoff: Record<string, string> = {}
  readonly #lastFailure = new Map<string, 'FAILED' | 'NOT_COMPLETED'>()
  #focus: string | null = null
  /** the slot whose bead is run-state's `current_bead` */
  #currentSlot: number | null = null
  #cycleSeq = 0
  #drain: DrainState = START
  #quota: QuotaState = HEALTHY
  #pausedMs = 0
  #idleMs = 0
  /** output changed since the last write */
  #outputDirty = false
  #lastWriteMs = -Infinity
  /** the trailing write of a throttled output line (a line followed by silence still shows) */
  #outputTimer: ReturnType<typeof setTimeout> | undefined
  #writing: Promise<void> = Promise.resolve()

  constructor(private readonly d: LoopDeps) {}

  get started(): boolean {
    return this.#s !== undefined
  }

  /** the run's state, read-only (throws before `begin`) */
  get state(): Frozen<RunState> {
    return this.#st()
  }

  #st(): RunState {
    if (!this.#s) throw new Error('run ledger read before the run began')
    return this.#s
  }

  get skipped(): ReadonlyMap<string, SkipEntry> {
    return this.#skip
  }

  get backoffUntil(): Readonly<Record<string, string>> {
    return this.#backoff
  }

  get focusedEpic(): string | null {
    return this.#focus
  }

  get drain(): DrainState {
    return this.#drain
  }

  get quota(): QuotaState {
    return this.#quota
  }

  get pausedMs(): number {
    return this.#pausedMs
  }

  get idleMs(): number {
    return this.#idleMs
  }

  begin(prev: RunState | null, fields: Partial<RunState>): void {
    const started = this.d.clock.now()
    this.#s = {
      ...emptyRunState(started),
      pid: this.d.pid,
      started_at: started.toISOString(),
      last_run: prev?.last_run ?? null,
      parallel_run_denied_count: prev?.parallel_run_denied_count ?? 0,
      phase: 'starting',
      workers: [],
      total_cost_usd: 0,
      last_output: null,
      ...fields,
    }
  }

  setLog(path: string): void {
    this.#st().log = path
  }

  // ------------------------------------------------------------ attempts

  /** a slot claimed its bead: the cycle number, and run-state's current bead */
  beginAttempt(slot: number, bead: string, startedAt: Date): number {
    const s = this.#st()
    const n = ++this.#cycleSeq
    s.current_cycle = n
    s.current_bead = bead
    s.current_bead_started_at = startedAt.toISOString()
    this.#currentSlot = slot
    this.#drain = nextDrain(this.#drain, {kind: 'claimed'})
    return n
  }

  /** the implementation agent is about to run: the attempt counts as attempted (SPEC 5.2) */
  dispatched(): void {
    this.#st().attempted_cycles++
  }

  /** the slot's implementation is over (gate, review, landing follow): its current bead is cleared, no other slot's */
  implementationDone(slot: number): void {
    if (this.#currentSlot !== slot) return
    const s = this.#st()
    s.current_bead = null
    s.current_bead_started_at = null
    this.#currentSlot = null
  }

  /** the slot's attempt ended, whatever its end: its worker entry and (if it holds it) the current bead go */
  endAttempt(slot: number): void {
    const s = this.#st()
    s.workers = (s.workers ?? []).filter((x) => x.slot !== slot)
    if (slot === 1) s.last_output = null
    this.implementationDone(slot)
  }

  setWorker(w: WorkerState): void {
    const s = this.#st()
    const ws = (s.workers ?? []).filter((x) => x.slot !== w.slot)
    ws.push({...w})
    ws.sort((a, b) => a.slot - b.slot)
    s.workers = ws
  }

  /**
   * The slot's agent pid (run-state `workers[].pid`, for `helix status`): set when the agent
   * is spawned, null when its dispatch ends. Written at once; a slot without a worker entry
   * (a review, a drain action) is left alone.
   */
  agentPid(slot: number, pid: number | null): void {
    const w = (this.#st().workers ?? []).find((x) => x.slot === slot)
    if (!w || w.pid === pid) return
    w.pid = pid
    void this.save().catch(() => undefined)
  }

  /** the in-flight agent's last output line; written at most about once a second (clock port) */
  output(slot: number, line: string): void {
    const s = this.#st()
    const w = (s.workers ?? []).find((x) => x.slot === slot)
    if (w) w.last_output = line
    if (slot === 1 || (s.workers ?? []).length <= 1) s.last_output = line
    this.#outputDirty = true
    // leading-edge throttle: a line a second after the last write is written; lines in between
    // ride on the next write, or on a trailing write once the second is up, so an agent that
    // prints one line and then works silently for minutes is seen with that line
    const since = this.d.clock.now().getTime() - this.#lastWriteMs
    if (since < OUTPUT_WRITE_MS) {
      if (this.#outputTimer === undefined) {
        this.#outputTimer = setTimeout(() => {
          this.#outputTimer = undefined
          if (this.#outputDirty) void this.save().catch(() => undefined)
        }, Math.min(OUTPUT_WRITE_MS, Math.max(0, OUTPUT_WRITE_MS - since)))
        this.#outputTimer.unref?.()
      }
      return
    }
    void this.save().catch(() => undefined) // best-effort: the next save (phase change, stop) retries and reports
  }

  addTokens(tokens: number, costUsd: number): void {
    const s = this.#st()
    s.total_tokens += tokens
    s.total_cost_usd = (s.total_cost_usd ?? 0) + costUsd
  }

  // ------------------------------------------------------------ cycles

  /** records a cycle; the ledger keeps its own copy, so later changes go through `amendCycle` */
  recordCycle(c: CycleRecord): void {
    this.#st().cycles.push({...c, commits: [...(c.commits ?? [])]})
  }

  /** a recorded cycle learns what came after it (its landing's commits, a NOT_LANDED or DRIFT end) */
  amendCycle(n: number, patch: CycleAmendment): void {
    const c = this.#st().cycles.find((x) => x.n === n)
    if (!c) return
    Object.assign(c, patch.commits ? {...patch, commits: [...patch.commits]} : patch)
  }

  /** one more completed cycle; returns the count */
  completed(): number {
    return ++this.#st().completed_cycles
  }

  closed(id: string): void {
    const s = this.#st()
    if (!s.closed_beads.includes(id)) s.closed_beads.push(id)
  }

  /** a bead this run had counted closed was reopened (not landed) */
  reopened(id: string): void {
    const s = this.#st()
    s.closed_beads = s.closed_beads.filter((b) => b !== id)
  }

  supervisory(entry: NonNullable<RunState['injected_supervisory']>[number]): void {
    const s = this.#st()
    s.injected_supervisory = [...(s.injected_supervisory ?? []), {...entry}]
  }

  // ------------------------------------------------------------ per bead

  attemptsOf(id: string): number {
    return this.#st().attempts[id] ?? 0
  }

  /**
   * A failed or non-completed attempt of `id`: its count, and whether every attempt so
   * far failed (SPEC 5.6: "failed attempts" vs "non-completing attempts").
   */
  failedAttempt(id: string, kind: 'FAILED' | 'NOT_COMPLETED'): {n: number; allFailed: boolean} {
    const s = this.#st()
    const n = (s.attempts[id] ?? 0) + 1
    s.attempts[id] = n
    const prev = this.#lastFailure.get(id)
    const now = n === 1 ? kind : prev === 'FAILED' && kind === 'FAILED' ? 'FAILED' : 'NOT_COMPLETED'
    this.#lastFailure.set(id, now)
    return {n, allFailed: now === 'FAILED'}
  }

  skip(id: string, reason: string, attempts: number): void {
    this.#skip.set(id, {reason, attempts})
  }

  backoff(id: string, until: string): void {
    this.#backoff[id] = until
  }

  clearBackoff(id: string): void {
    delete this.#backoff[id]
  }

  focus(epic: string | null): void {
    this.#focus = epic
  }

  // ------------------------------------------------------------ drain, pause, stop

  drainEvent(e: DrainEvent): void {
    this.#drain = nextDrain(this.#drain, e)
  }

  quotaEvent(e: QuotaEvent): void {
    this.#quota = nextQuota(this.#quota, e)
  }

  /** SPEC 14.3: run-state shows the pause */
  pause(until: Date, reason: string): void {
    const s = this.#st()
    s.paused_until = until.toISOString()
    s.pause_reason = reason
  }

  resume(pausedMs: number): void {
    const s = this.#st()
    s.paused_until = null
    s.pause_reason = null
    this.#pausedMs += Math.max(0, pausedMs)
  }

  idle(ms: number): void {
    this.#idleMs += Math.max(0, ms)
  }

  /** the run is over: the stop and the `last_run` summary; nothing in flight is left in the state */
  stop(reason: StopReason, message: string | null, ended: Date): void {
    const s = this.#st()
    s.stop_reason = reason
    s.stop_message = message
    s.current_bead = null
    s.current_bead_started_at = null
    this.#currentSlot = null
    s.workers = []
    s.last_output = null
    s.paused_until = null
    s.pause_reason = null
    s.last_run = {
      started_at: s.started_at ?? ended.toISOString(),
      ended_at: ended.toISOString(),
      attempted_cycles: s.attempted_cycles,
      completed_cycles: s.completed_cycles,
      total_tokens: s.total_tokens,
      stop_reason: reason,
    }
  }

  // ------------------------------------------------------------ writes

  /** one write at a time: throttled output writes never interleave with a phase change */
  save(phase?: string): Promise<void> {
    const s = this.#st()
    if (phase) s.phase = phase
    // this write carries the latest output too
    this.#outputDirty = false
    this.#lastWriteMs = this.d.clock.now().getTime()
    const next = this.#writing.then(() => this.#write())
    this.#writing = next.catch(() => undefined) // the caller of save() gets the error through `next`; the queue just goes on
    return next
  }

  async #write(): Promise<void> {
    const s = this.#st()
    s.updated_at = this.d.clock.now().toISOString()
    s.skipped = [...this.#skip].map(([id, e]) => ({id, reason: e.reason, attempts: e.attempts}))
    s.backoff_until = {...this.#backoff}
    s.focused_epic = this.#focus
    // a denied `helix run` bumps parallel_run_denied_count in this file while we run: keep its count
    const keep = (onDisk: RunState | null) => {
      if (onDisk && onDisk.parallel_run_denied_count > s.parallel_run_denied_count) s.parallel_run_denied_count = onDisk.parallel_run_denied_count
      return structuredClone(s)
    }
    if (this.d.state.update) {
      await this.d.state.update((onDisk) => keep(onDisk))
      return
    }
    await this.d.state.save(keep(await this.d.state.load()))
  }

  /** output lines not yet written, then wait for writes in flight (the run is stopping) */
  async settle(): Promise<void> {
    clearTimeout(this.#outputTimer)
    this.#outputTimer = undefined
    if (this.#outputDirty) await this.save().catch(() => undefined)
    await this.#writing
  }
}
