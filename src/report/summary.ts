/**
 * `helix report` (SPEC 16.5): what happened overnight, from `.helix-logs/runs.jsonl`
 * (one RunHistoryRecord per run, appended when it stops). Pure summarising here;
 * rendering is in `text.ts` and `html.ts`. Lines that are not a JSON object are
 * skipped and counted, never fatal: the history is append-only and a run killed
 * mid-write may leave half a line.
 */
import type {PrRow} from '../operator/pr-status.js'
import {closeSync, constants, fstatSync, openSync, readFileSync} from 'node:fs'
import {HelixError, errorMessage, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {CycleOutcome, RunHistoryCycle, RunHistoryRecord} from '../state/types.js'

export const DEFAULT_SINCE = '24h'

const UNIT_MS: Record<string, number> = {m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000}

/**
 * `--since`: a duration back from now (`30m`, `24h`, `7d`, `2w`) or a date/time
 * (`2026-11-22`, local midnight; `2026-11-22T18:00`, `2026-11-22T18:00:00Z`). Anything
 * else, or a time in the future, is bad input.
 */
export function parseSince(text: string, now: Date): Date {
  const s = text.trim()
  const bad = () => new HelixError(`invalid --since '${sanitize(text)}': use a duration like 24h, 30m, 7d or a date like 2026-11-22`, EXIT.ERROR)
  const dur = /^(\d{1,6})([mhdw])$/.exec(s)
  if (dur) return new Date(now.getTime() - Number(dur[1]) * UNIT_MS[dur[2]])
  let t: number
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (day) {
    const d = new Date(Number(day[1]), Number(day[2]) - 1, Number(day[3]))
    // reject 2026-02-31 and friends (Date rolls them over)
    if (d.getMonth() !== Number(day[2]) - 1 || d.getDate() !== Number(day[3])) throw bad()
    t = d.getTime()
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/.test(s)) {
    t = Date.parse(s)
  } else throw bad()
  if (Number.isNaN(t)) throw bad()
  if (t > now.getTime()) throw new HelixError(`invalid --since '${sanitize(text)}': it is in the future`, EXIT.ERROR)
  return new Date(t)
}

export interface History {
  runs: RunHistoryRecord[]
  /** 1-based line numbers of lines that were not a run record */
  skipped_lines: number[]
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

function validTime(v: unknown): boolean {
  return typeof v === 'string' && !Number.isNaN(Date.parse(v))
}

/** One cycle with every field present and of the right type (unknown values become neutral ones). */
function normalizeCycle(c: Partial<RunHistoryCycle> & Record<string, unknown>, i: number): RunHistoryCycle | null {
  if (!c || typeof c !== 'object' || typeof c.bead !== 'string' || !validTime(c.started_at)) return null
  const started = str(c.started_at)
  const ended = validTime(c.ended_at) ? str(c.ended_at) : new Date(Date.parse(started) + num(c.duration_ms)).toISOString()
  return {
    n: num(c.n) || i + 1,
    slot: num(c.slot) || 1,
    bead: c.bead,
    title: str(c.title),
    outcome: (str(c.outcome) || 'FAILED') as CycleOutcome,
    reason: typeof c.reason === 'string' ? c.reason : null,
    started_at: started,
    ended_at: ended,
    duration_ms: num(c.duration_ms) || Math.max(0, Date.parse(ended) - Date.parse(started)),
    tokens: num(c.tokens),
    cost_usd: num(c.cost_usd),
    commits: Array.isArray(c.commits) ? c.commits.filter((x): x is string => typeof x === 'string') : [],
  }
}

export function parseHistory(text: string): History {
  const runs: RunHistoryRecord[] = []
  const skipped_lines: number[] = []
  const lines = text.split('\n')
  lines.forEach((line, i) => {
    if (line.trim() === '') return
    let r: Record<string, unknown>
    try {
      r = JSON.parse(line)
    } catch {
      skipped_lines.push(i + 1)
      return
    }
    if (!r || typeof r !== 'object' || Array.isArray(r) || !validTime(r.started_at)) {
      skipped_lines.push(i + 1)
      return
    }
    const cycles = (Array.isArray(r.cycles) ? r.cycles : []).map((c, j) => normalizeCycle(c as never, j)).filter((c): c is RunHistoryCycle => c !== null)
    const lastEnd = cycles.reduce((m, c) => Math.max(m, Date.parse(c.ended_at)), Date.parse(str(r.started_at)))
    runs.push({
      v: 1,
      started_at: str(r.started_at),
      ended_at: validTime(r.ended_at) ? str(r.ended_at) : new Date(lastEnd).toISOString(),
      flags: r.flags && typeof r.flags === 'object' && !Array.isArray(r.flags) ? (r.flags as Record<string, unknown>) : {},
      agent: typeof r.agent === 'string' ? r.agent : null,
      review_agent: typeof r.review_agent === 'string' ? r.review_agent : null,
      workers: num(r.workers) || 1,
      attempted: num(r.attempted) || cycles.length,
      completed: num(r.completed),
      tokens: num(r.tokens) || cycles.reduce((s, c) => s + c.tokens, 0),
      cost_usd: num(r.cost_usd) || cycles.reduce((s, c) => s + c.cost_usd, 0),
      stop_reason: typeof r.stop_reason === 'string' ? (r.stop_reason as RunHistoryRecord['stop_reason']) : null,
      stop_message: typeof r.stop_message === 'string' ? r.stop_message : null,
      exit_code: num(r.exit_code),
      paused_ms: num(r.paused_ms),
      idle_ms: num(r.idle_ms),
      cycles,
      blockers: (Array.isArray(r.blockers) ? r.blockers : [])
        .filter((b): b is Record<string, unknown> => Boolean(b) && typeof b === 'object' && typeof (b as {id?: unknown}).id === 'string')
        .map((b) => ({id: str(b.id), title: str(b.title), reason: str(b.reason), attempts: num(b.attempts)})),
      log: typeof r.log === 'string' ? r.log : null,
      ...(typeof r.host === 'string' && r.host ? {host: r.host} : {}),
    })
  })
  return {runs, skipped_lines}
}

/** Reads the history file; a missing file is an empty history. Only a regular file is read (a FIFO would block). */
export function readHistory(file: string): History {
  let fd: number
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {runs: [], skipped_lines: []}
    throw new HelixError(`cannot read ${sanitize(file)}: ${sanitize(errorMessage(error))}`, EXIT.ERROR)
  }
  try {
    if (!fstatSync(fd).isFile()) throw new HelixError(`${sanitize(file)} is not a regular file`, EXIT.ERROR)
    return parseHistory(readFileSync(fd, 'utf8'))
  } finally {
    closeSync(fd)
  }
}

/** Outcomes that closed the bead. */
export const CLOSED_OUTCOMES: ReadonlySet<string> = new Set(['COMPLETE', 'SALVAGED', 'DECOMPOSED'])

export interface BeadSummary {
  id: string
  title: string
  attempts: number
  /** the bead was closed by a cycle in the window */
  closed: boolean
  last_outcome: string
  commits: string[]
  tokens: number
  cost_usd: number
  /** agent time spent on the bead (sum of its cycle durations) */
  time_ms: number
  closed_at: string | null
}

export interface Report {
  since: string
  until: string
  runs: number
  /** runs in the window, oldest first, without their cycles */
  /** the runs' real span (first start → last end), null without runs; the window is only the query */
  span: {start: string; end: string} | null
  run_list: Array<{
    started_at: string
    ended_at: string
    agent: string | null
    review_agent: string | null
    workers: number
    attempted: number
    completed: number
    tokens: number
    cost_usd: number
    stop_reason: string | null
    /** the stop in words (error line, failure, quota reset) */
    stop_message: string | null
    log: string | null
    /** the `--remote` host of the run (absent for a run on one host) */
    host?: string
  }>
  /**
   * `via: 'tracker'`: closed during the runs but not by a cycle (an epic closed when its last child did);
   * `host`: the `--remote` host whose run landed it (absent for a run on one host)
   */
  closed: Array<{id: string; title: string; commits: string[]; closed_at: string; via?: 'cycle' | 'tracker'; host?: string}>
  failures: Array<{
    id: string
    title: string
    outcome: string
    reason: string | null
    at: string
    slot: number
    /** this bead's attempt number within the window (1 = its first cycle here) */
    attempt: number
    /** the cycle number within its run, and that run's session log */
    cycle: number
    log: string | null
    /** when a later cycle closed the bead: which attempt and when; null when it did not */
    later_closed: {attempt: number; at: string} | null
  }>
  /** cost is shown only when some agent reported one (no `$0.00` for agents that report none) */
  cost_known: boolean
  /** check and review answers, from the runs' session logs (report/verdicts.ts) */
  verdicts: Array<{at: string; kind: 'check' | 'review'; bead: string | null; verdict: string; log: string | null}>
  /** what is left in the tracker now (not closed), with why it is not done; filled by report/index.ts */
  left: Array<{id: string; title: string; state: string}>
  blocked: Array<{id: string; title: string; reason: string; attempts: number}>
  /** what needs the operator, first in the report (SPEC 22.2): blocked beads still not closed, with why; filled by report/index.ts */
  needs_you?: Array<{id: string; title: string; why: string}>
  /** SPEC 20.5: the pull requests a --land pr run saw here, still open (absent: no such run) */
  pull_requests?: PrRow[]
  beads: BeadSummary[]
  totals: {
    cycles: number
    closed: number
    failed: number
    tokens: number
    cost_usd: number
    /** agent time: sum of cycle durations */
    agent_ms: number
    /** wall time of the runs */
    run_ms: number
    paused_ms: number
    idle_ms: number
  }
  /** every cycle in the window, oldest first (the HTML timeline); `host`: its `--remote` run's host */
  cycles: Array<RunHistoryCycle & {host?: string}>
  /** `report --remote` (SPEC 22.2): the remote read, its base tip and the hosts whose records it holds */
  fleet?: {remote: string; base: string; tip: string; hosts: Array<{host: string; runs: number}>}
  skipped_lines: number[]
}

/** Summarises the runs that ended at or after `since` (a run that overlaps the window counts whole). */
export function buildReport(history: History, since: Date, now: Date): Report {
  const runs = history.runs.filter((r) => Date.parse(r.ended_at) >= since.getTime()).sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at))
  // a fleet's cycles carry their run's host (the timeline's rows are per host and slot)
  const runOf = new Map<RunHistoryCycle, RunHistoryRecord>()
  const cycles = runs
    .flatMap((r) =>
      r.cycles.map((c) => {
        const k = r.host ? {...c, host: r.host} : c
        runOf.set(k, r)
        return k
      }),
    )
    .sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at))
  const byBead = new Map<string, BeadSummary>()
  const closed: Report['closed'] = []
  const failures: Report['failures'] = []
  const logOf = new Map<RunHistoryCycle, string | null>()
  const hostOf = new Map<RunHistoryCycle, string>()
  for (const c of cycles) {
    const r = runOf.get(c)
    logOf.set(c, r?.log ?? null)
    if (r?.host) hostOf.set(c, r.host)
  }
  for (const c of cycles) {
    let b = byBead.get(c.bead)
    if (!b) {
      b = {id: c.bead, title: c.title, attempts: 0, closed: false, last_outcome: c.outcome, commits: [], tokens: 0, cost_usd: 0, time_ms: 0, closed_at: null}
      byBead.set(c.bead, b)
    }
    b.attempts++
    if (c.title) b.title = c.title
    b.last_outcome = c.outcome
    b.tokens += c.tokens
    b.cost_usd += c.cost_usd
    b.time_ms += c.duration_ms
    for (const k of c.commits) if (!b.commits.includes(k)) b.commits.push(k)
    if (CLOSED_OUTCOMES.has(c.outcome)) {
      b.closed = true
      b.closed_at = c.ended_at
      const host = hostOf.get(c)
      closed.push({id: c.bead, title: c.title || b.title, commits: c.commits, closed_at: c.ended_at, via: 'cycle', ...(host ? {host} : {})})
      for (const f of failures) if (f.id === c.bead && f.later_closed === null) f.later_closed = {attempt: b.attempts, at: c.ended_at}
    } else {
      failures.push({id: c.bead, title: c.title || b.title, outcome: c.outcome, reason: c.reason, at: c.ended_at, slot: c.slot, attempt: b.attempts, cycle: c.n, log: logOf.get(c) ?? null, later_closed: null})
    }
  }
  const blocked = new Map<string, Report['blocked'][number]>()
  for (const r of runs) for (const b of r.blockers) blocked.set(b.id, b)
  const sum = (f: (r: RunHistoryRecord) => number) => runs.reduce((s, r) => s + f(r), 0)
  return {
    since: since.toISOString(),
    until: now.toISOString(),
    runs: runs.length,
    span: runs.length
      ? {start: runs[0].started_at, end: new Date(Math.max(...runs.map((r) => Date.parse(r.ended_at)))).toISOString()}
      : null,
    run_list: runs.map((r) => ({
      started_at: r.started_at,
      ended_at: r.ended_at,
      agent: r.agent,
      review_agent: r.review_agent,
      workers: r.workers,
      attempted: r.attempted,
      completed: r.completed,
      tokens: r.tokens,
      cost_usd: r.cost_usd,
      stop_reason: r.stop_reason,
      stop_message: r.stop_message ?? null,
      log: r.log,
      ...(r.host ? {host: r.host} : {}),
    })),
    cost_known: runs.some((r) => r.cost_usd > 0) || cycles.some((c) => c.cost_usd > 0),
    verdicts: [],
    left: [],
    closed,
    failures,
    blocked: [...blocked.values()],
    beads: [...byBead.values()].map((b) => ({...b, cost_usd: Math.round(b.cost_usd * 1e6) / 1e6})).sort((a, b) => b.time_ms - a.time_ms),
    totals: {
      cycles: cycles.length,
      closed: closed.length,
      failed: failures.length,
      tokens: sum((r) => r.tokens),
      cost_usd: Math.round(sum((r) => r.cost_usd) * 1e6) / 1e6,
      agent_ms: cycles.reduce((s, c) => s + c.duration_ms, 0),
      run_ms: sum((r) => Math.max(0, Date.parse(r.ended_at) - Date.parse(r.started_at))),
      paused_ms: sum((r) => r.paused_ms),
      idle_ms: sum((r) => r.idle_ms),
    },
    cycles,
    skipped_lines: history.skipped_lines,
  }
}
