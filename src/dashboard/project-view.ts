/**
 * One project's part of the page, read from disk without writing anything: the
 * tracker (lock-free), run-state, the pid file (a dead pid is reported as no run,
 * never removed: the page is read-only), `.helix-logs/runs.jsonl` and the run's
 * session log. Status figures come from `helix status`'s own model; the night (runs,
 * cycles, reasons) from the report's.
 */
import {statSync} from 'node:fs'
import path from 'node:path'
import {buildStatusModel, type StatusModel} from '../operator/model.js'
import {trackerView, type TrackerView} from '../operator/tracker-view.js'
import {stoppedWords} from '../operator/text.js'
import {readTracker} from '../tracker/store.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import {readRunState} from '../state/run-state.js'
import {readPidFile, runHolderAlive} from '../state/pidfile.js'
import {readHistory, CLOSED_OUTCOMES, type History, type Report} from '../report/summary.js'
import type {RunState} from '../state/types.js'
import {projectPaths} from '../util/root.js'
import {nightReport} from './night.js'
import {LogIndex, type DispatchSpan} from './log-files.js'
import type {EventRow, LogLink, ProjectView, QueueView, RunBeadRow, SlotView} from './types.js'

export interface ProjectRead {
  view: Omit<ProjectView, 'chart_version' | 'fleet'>
  report: Report | null
}

/** How long the tracker's queries of an unchanged tracker are reused (claims go stale with time alone). */
export const TRACKER_VIEW_MS = 5_000

/** What one project keeps between reads: the session logs' indexes. */
export class ProjectReader {
  #logs = new Map<string, LogIndex>()
  /** runs.jsonl parsed, kept while its size and mtime stay the same (it only grows, once per run) */
  #history: {key: string; value: History} | null = null
  /** `--remote`: every host's run records, as the last fleet read found them (null: none read yet) */
  fleetRuns: History | null = null

  constructor(
    readonly index: number,
    readonly root: string,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  #logIndex(logDir: string, file: string | null | undefined): LogIndex | null {
    if (!file) return null
    // only a log directly inside this project's .helix-logs/ is indexed (and linked)
    if (path.dirname(path.resolve(this.root, file)) !== logDir) return null
    const name = path.basename(file)
    let idx = this.#logs.get(name)
    if (!idx) {
      idx = new LogIndex(logDir, name)
      this.#logs.set(name, idx)
    }
    idx.refresh()
    return idx
  }

  /**
   * The tracker's queries (ready, waiting, stale claims) for an unchanged snapshot are
   * kept for `TRACKER_VIEW_MS`: an agent printing re-reads the project up to five times
   * a second, and on 20,000 beads the queries took 70–160 ms each time (27% of a core
   * while a log grew 10 lines a second, measured). A changed tracker is a new snapshot.
   */
  async #trackerView(snap: TrackerSnapshot, now: Date): Promise<TrackerView> {
    const c = this.#tv
    if (c && c.snap === snap && now.getTime() >= c.at && now.getTime() - c.at < TRACKER_VIEW_MS) return c.view
    const view = await trackerView(snap, now, this.env)
    this.trackerQueries++
    this.#tv = {snap, at: now.getTime(), view}
    return view
  }

  #tv: {snap: TrackerSnapshot; at: number; view: TrackerView} | null = null
  /** how many times the tracker's queries ran (the cost a test counts) */
  trackerQueries = 0

  #readHistory(file: string): History {
    let key = 'absent'
    try {
      const st = statSync(file)
      key = `${st.ino}:${st.size}:${st.mtimeMs}`
    } catch {
      // absent: an empty history (readHistory says the same)
    }
    if (this.#history?.key !== key) this.#history = {key, value: readHistory(file)}
    return this.#history.value
  }

  async read(now: Date = new Date()): Promise<ProjectRead> {
    const paths = projectPaths(this.root, this.env)
    const base: ProjectRead['view'] = {index: this.index, name: path.basename(this.root), root: this.root, error: null, run: null, slots: [], run_beads: [], queue: null, events: [], night: {runs: 0, cycles: 0, closed: 0, failed: 0, tokens: 0}}
    // a tracker or run-state that cannot be read throws: the hub says why on the page and
    // keeps the last view it had (a broken line must not look like an empty queue)
    const [snap, rs]: [TrackerSnapshot, RunState | null] = await Promise.all([readTracker(paths.file), readRunState(paths.runState)])
    const rec = readPidFile(paths.pidFile)
    const live = rec && rec.pid > 0 && runHolderAlive(rec) ? {pid: rec.pid, started: rec.started} : null
    const tv = await this.#trackerView(snap, now)
    const m = buildStatusModel({snap, counts: tv.counts, waiting: tv.waiting, staleClaims: tv.staleClaims, runState: rs, livePid: live, now})
    let report: Report | null = null
    let historyError: string | null = null
    try {
      report = nightReport(this.#readHistory(path.join(paths.logDir, 'runs.jsonl')), rs, now, this.fleetRuns)
    } catch (error) {
      historyError = `cannot read the run history: ${(error as Error).message}`
    }
    const logIdx = this.#logIndex(paths.logDir, rs?.log)
    const spans = logIdx ? logIdx.implementations() : []
    const link = (s: DispatchSpan | undefined): LogLink | null => (s && logIdx ? {file: logIdx.name, from: s.first, to: s.last, slot: s.slot} : null)
    const runLive = Boolean(m.active && rs && rs.pid === m.active.pid)
    const slots: SlotView[] = m.in_flight.map((f) => {
      const span = spans.filter((s) => (s.bead === null || s.bead === f.bead) && (s.slot === null || s.slot === f.slot)).at(-1)
      return {
        slot: f.slot,
        bead: f.bead,
        title: f.title,
        agent: rs?.agent ?? null,
        attempt: f.attempt ?? null,
        started_at: f.started_at ?? rs?.current_bead_started_at ?? null,
        timeout_s: f.timeout_s,
        // the session log has every line as the agent prints it; run-state's copy is written at most once a second
        last_output: (span && !span.ended ? span.lastLine : null) ?? f.last_output,
        log: link(span),
      }
    })
    return {
      view: {
        ...base,
        error: historyError,
        run: rs ? runSummary(m, rs, runLive) : null,
        slots,
        run_beads: rs ? runBeads(rs, slots, spans, link) : [],
        queue: queueOf(m, tv.ready, snap, now),
        events: report ? eventsOf(report, m, rs, spans, link) : [],
        night: report ? {runs: report.runs, cycles: report.totals.cycles, closed: report.totals.closed, failed: report.totals.failed, tokens: report.totals.tokens} : base.night,
      },
      report,
    }
  }
}

function runSummary(m: StatusModel, rs: RunState, live: boolean): NonNullable<ProjectView['run']> {
  const p = m.progress
  return {
    live,
    pid: live ? rs.pid : null,
    started_at: rs.started_at,
    phase: live ? m.phase : null,
    stop_reason: live ? null : rs.stop_reason ?? null,
    // the words `helix status` says under Last Run: the reason and what stopped it
    stopped: live ? null : stoppedWords(rs.stop_reason, typeof rs.stop_message === 'string' ? rs.stop_message : null),
    completed: rs.completed_cycles ?? 0,
    attempted: rs.attempted_cycles ?? 0,
    max_cycles: typeof rs.max_cycles === 'number' && rs.max_cycles > 0 ? rs.max_cycles : null,
    tokens: rs.total_tokens ?? 0,
    cost_usd: typeof rs.total_cost_usd === 'number' && rs.total_cost_usd > 0 ? rs.total_cost_usd : null,
    elapsed_s: p?.elapsed_s ?? null,
    mean_cycle_s: p?.mean_cycle_s ?? null,
    paused_until: m.paused_until,
    pause_reason: m.pause_reason,
    log: rs.log ?? null,
  }
}

/** The run's beads: its cycles (one row per bead, last outcome wins) and what is running now. */
function runBeads(rs: RunState, slots: SlotView[], spans: DispatchSpan[], link: (s: DispatchSpan | undefined) => LogLink | null): RunBeadRow[] {
  const rows = new Map<string, RunBeadRow>()
  const cycles = (Array.isArray(rs.cycles) ? rs.cycles : []).filter((c) => c && typeof c.bead === 'string').sort((a, b) => a.n - b.n)
  // with one worker the dispatch records name no bead: the k-th implementation is the k-th cycle
  const tagged = spans.some((s) => s.bead !== null)
  cycles.forEach((c, k) => {
    let row = rows.get(c.bead)
    if (!row) {
      row = {bead: c.bead, title: c.title ?? '', state: '', attempts: 0, reason: null, logs: []}
      rows.set(c.bead, row)
    }
    row.attempts++
    row.state = CLOSED_OUTCOMES.has(c.outcome) ? 'landed' : c.outcome.toLowerCase()
    row.reason = CLOSED_OUTCOMES.has(c.outcome) ? null : c.reason ?? null
    if (c.title) row.title = c.title
    const span = tagged ? spans.filter((s) => s.bead === c.bead)[row.attempts - 1] : spans[k]
    const l = link(span)
    if (l) row.logs.push(l)
  })
  for (const s of slots) {
    let row = rows.get(s.bead)
    if (!row) {
      row = {bead: s.bead, title: s.title, state: '', attempts: 0, reason: null, logs: []}
      rows.set(s.bead, row)
    }
    row.state = 'running'
    // the attempt under way counts too
    row.attempts = Math.max(row.attempts + 1, s.attempt ?? 0)
    if (s.log && !row.logs.some((l) => l.from === s.log!.from)) row.logs.push(s.log)
  }
  return [...rows.values()]
}

function titleOf(snap: TrackerSnapshot, id: string): string {
  const t = snap.byId.get(id)?.title
  return typeof t === 'string' ? t : ''
}

/**
 * The most rows of each queue list the page is sent. Its figures count every bead; the
 * lists show the first ones. A tracker of thousands of beads would otherwise make every
 * state hundreds of kB and every render seconds of the browser's time, several times a
 * second while an agent prints (20,000 beads: 878 kB, 3.9 s a render, measured).
 */
export const LIST_CAP = 100

function queueOf(m: StatusModel, ready: Array<{id: string; title?: unknown}>, snap: TrackerSnapshot, now: Date): QueueView {
  const today = new Date(now)
  today.setHours(0, 0, 0, 0)
  const closed = snap.beads
    .filter((b) => b.status === 'closed' && typeof b.updated_at === 'string' && Date.parse(b.updated_at) >= today.getTime())
    .map((b) => ({id: b.id, title: typeof b.title === 'string' ? b.title : '', at: Date.parse(b.updated_at as string)}))
  // newest first: the list shows what the night closed last
  const closedToday = closed.sort((a, b) => b.at - a.at).slice(0, LIST_CAP).map(({id, title}) => ({id, title}))
  const waiting = m.parked.filter((p) => p.kind === 'waiting-deps')
  const blocked = m.parked.filter((p) => p.kind === 'blocked-label' || p.kind === 'blocked-status')
  // held back by the live run: backing off after failures (until when), or skipped this run
  const held = m.parked.filter((p) => p.kind === 'backoff' || p.kind === 'skipped')
  return {
    ready: ready.slice(0, LIST_CAP).map((b) => ({id: b.id, title: typeof b.title === 'string' ? b.title : ''})),
    waiting: waiting.slice(0, LIST_CAP).map((p) => ({id: p.id, title: p.title || titleOf(snap, p.id), on: p.reason.replace(/^waiting on /, '').split(', ')})),
    blocked: blocked.slice(0, LIST_CAP).map((p) => ({id: p.id, title: p.title, reason: p.reason})),
    closed_today: closedToday,
    held: held.slice(0, LIST_CAP).map((p) => ({id: p.id, title: p.title, reason: p.reason, until: p.next_eligible})),
    counts: {closed: m.beads.closed, total: m.beads.total, left: m.beads.left, waiting: m.beads.waiting, blocked: m.beads.blocked, ready: m.tracker.ready},
    lengths: {ready: ready.length, waiting: waiting.length, blocked: blocked.length, closed_today: closed.length, held: held.length},
    eta_s: m.beads.eta_s,
  }
}

const EVENT_OF: Record<string, EventRow['kind']> = {NOT_LANDED: 'not_landed'}

/** The last things that happened: cycles of the night, blocks, a pause; newest first. */
function eventsOf(r: Report, m: StatusModel, rs: RunState | null, spans: DispatchSpan[], link: (s: DispatchSpan | undefined) => LogLink | null): EventRow[] {
  const out: EventRow[] = []
  const thisRun = new Set((rs?.cycles ?? []).map((c) => `${c.bead} ${c.started_at}`))
  const seenAttempts = new Map<string, number>()
  for (const c of r.cycles) {
    const closed = CLOSED_OUTCOMES.has(c.outcome)
    let log: LogLink | null = null
    if (thisRun.has(`${c.bead} ${c.started_at}`)) {
      const k = (seenAttempts.get(c.bead) ?? 0) + 1
      seenAttempts.set(c.bead, k)
      log = link(spans.filter((s) => s.bead === c.bead)[k - 1])
    }
    out.push({
      at: c.ended_at,
      kind: closed ? 'completed' : EVENT_OF[c.outcome] ?? 'failed',
      outcome: c.outcome,
      bead: c.bead,
      title: c.title,
      text: closed ? '' : c.reason ?? '',
      log,
    })
  }
  for (const p of m.parked) {
    if (p.kind !== 'blocked-label' && p.kind !== 'blocked-status') continue
    const at = p.age_seconds === null ? m.now : new Date(Date.parse(m.now) - p.age_seconds * 1000).toISOString()
    out.push({at, kind: 'blocked', outcome: null, bead: p.id, title: p.title, text: p.reason.replace(/^blocked: /, ''), log: null})
  }
  // the page words the end on the browser's clock (`until 03:00:00 (in 14h 2m): quota`)
  if (m.paused_until) out.push({at: m.now, kind: 'paused', outcome: null, bead: null, title: '', text: m.pause_reason ?? '', until: m.paused_until, log: null})
  return out.sort((a, b) => Date.parse(b.at) - Date.parse(a.at)).slice(0, 40)
}
