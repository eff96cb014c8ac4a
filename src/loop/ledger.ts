/**
 * The run ledger: the one owner of this run's run-state (SPEC 7.3, 16.4). Every
 * change goes through it; `save` writes the file. Output updates (`last_output`)
 * are throttled to about one write a second.
 */
import {emptyRunState} from '../state/run-state.js'
import type {CycleRecord, RunState, WorkerState} from '../state/types.js'
import type {LoopDeps} from './ports.js'

export interface Bookkeeping {
  skipped: RunState['skipped']
  backoff_until: Record<string, string>
  focused_epic: string | null
}

const OUTPUT_WRITE_MS = 1000

export class RunLedger {
  state!: RunState
  private pendingOutput: ReturnType<typeof setTimeout> | null = null
  private writing: Promise<void> = Promise.resolve()

  constructor(
    private readonly d: LoopDeps,
    private readonly bookkeeping: () => Bookkeeping,
  ) {}

  get started(): boolean {
    return this.state !== undefined
  }

  begin(prev: RunState | null, fields: Partial<RunState>): void {
    const started = this.d.clock.now()
    this.state = {
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

  /** one write at a time: throttled output writes never interleave with a phase change */
  save(phase?: string): Promise<void> {
    if (phase) this.state.phase = phase
    // this write carries the latest output too
    if (this.pendingOutput) clearTimeout(this.pendingOutput)
    this.pendingOutput = null
    const next = this.writing.then(() => this.write())
    this.writing = next.catch(() => undefined) // the caller of save() gets the error through `next`; the queue just goes on
    return next
  }

  private async write(): Promise<void> {
    const s = this.state
    s.updated_at = this.d.clock.now().toISOString()
    Object.assign(s, this.bookkeeping())
    // a denied `helix run` bumps parallel_run_denied_count in this file while we run: keep its count
    const keep = (onDisk: RunState | null) => {
      if (onDisk && onDisk.parallel_run_denied_count > s.parallel_run_denied_count) s.parallel_run_denied_count = onDisk.parallel_run_denied_count
      return s
    }
    if (this.d.state.update) {
      await this.d.state.update((onDisk) => keep(onDisk))
      return
    }
    await this.d.state.save(keep(await this.d.state.load()))
  }

  addTokens(tokens: number, costUsd: number): void {
    this.state.total_tokens += tokens
    this.state.total_cost_usd = (this.state.total_cost_usd ?? 0) + costUsd
  }

  recordCycle(c: CycleRecord): void {
    this.state.cycles.push(c)
  }

  closed(id: string): void {
    if (!this.state.closed_beads.includes(id)) this.state.closed_beads.push(id)
  }

  setWorker(w: WorkerState): void {
    const ws = (this.state.workers ?? []).filter((x) => x.slot !== w.slot)
    ws.push(w)
    ws.sort((a, b) => a.slot - b.slot)
    this.state.workers = ws
  }

  clearWorker(slot: number): void {
    this.state.workers = (this.state.workers ?? []).filter((x) => x.slot !== slot)
    if (slot === 1) this.state.last_output = null
  }

  /**
   * The slot's agent pid (run-state `workers[].pid`, for `helix status`): set when the agent
   * is spawned, null when its dispatch ends. Written at once; a slot without a worker entry
   * (a review, a drain action) is left alone.
   */
  agentPid(slot: number, pid: number | null): void {
    const w = (this.state.workers ?? []).find((x) => x.slot === slot)
    if (!w || w.pid === pid) return
    w.pid = pid
    void this.save().catch(() => undefined)
  }

  /** the in-flight agent's last output line; written at most about once a second */
  output(slot: number, line: string): void {
    const w = (this.state.workers ?? []).find((x) => x.slot === slot)
    if (w) w.last_output = line
    if (slot === 1 || (this.state.workers ?? []).length <= 1) this.state.last_output = line
    // coalesced: one write a second at most, none at all for an agent that ends sooner
    if (this.pendingOutput) return
    this.pendingOutput = setTimeout(() => {
      this.pendingOutput = null
      void this.save().catch(() => undefined) // a throttled output snapshot: best-effort, the next save (phase change, stop) retries and reports
    }, OUTPUT_WRITE_MS)
    this.pendingOutput.unref?.()
  }

  /** stop the pending output write (the run is stopping) and wait for writes in flight */
  async settle(): Promise<void> {
    if (this.pendingOutput) clearTimeout(this.pendingOutput)
    this.pendingOutput = null
    await this.writing
  }
}
