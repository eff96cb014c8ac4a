/**
 * One model of the night for the report and the page alike: the runs of
 * `.helix-logs/runs.jsonl` plus the run in progress (its cycles from run-state, which
 * reach the history only when it stops), summarised by the report's own
 * `buildReport`. The page's charts are the report's renderers over this model.
 */
import {buildReport, type History, type Report} from '../report/summary.js'
import type {RunHistoryCycle, RunHistoryRecord, RunState} from '../state/types.js'

/** The night the page shows: the last 24 hours, as `helix report` by default. */
export const NIGHT_MS = 24 * 3_600_000

/** run-state's cycles as history cycles (the shape the report reads). */
export function cyclesOfRunState(rs: RunState): RunHistoryCycle[] {
  const cycles = Array.isArray(rs.cycles) ? rs.cycles : []
  return cycles
    .filter((c) => c && typeof c.bead === 'string' && typeof c.started_at === 'string' && !Number.isNaN(Date.parse(c.started_at)))
    .map((c, i) => ({
      n: typeof c.n === 'number' ? c.n : i + 1,
      slot: typeof c.slot === 'number' && c.slot > 0 ? c.slot : 1,
      bead: c.bead,
      title: typeof c.title === 'string' ? c.title : '',
      outcome: c.outcome,
      reason: typeof c.reason === 'string' ? c.reason : null,
      started_at: c.started_at,
      ended_at: typeof c.ended_at === 'string' && !Number.isNaN(Date.parse(c.ended_at)) ? c.ended_at : c.started_at,
      duration_ms: typeof c.duration_ms === 'number' ? c.duration_ms : 0,
      tokens: typeof c.tokens === 'number' ? c.tokens : 0,
      cost_usd: typeof c.cost_usd === 'number' ? c.cost_usd : 0,
      commits: Array.isArray(c.commits) ? c.commits.filter((k): k is string => typeof k === 'string') : [],
    }))
}

/**
 * The history with the run-state's run added when the history does not hold it yet
 * (a run in progress, or one killed before it could append its record).
 */
export function withCurrentRun(history: History, rs: RunState | null, now: Date): History {
  if (!rs || !rs.started_at || history.runs.some((r) => r.started_at === rs.started_at)) return history
  const cycles = cyclesOfRunState(rs)
  if (cycles.length === 0) return history
  const current: RunHistoryRecord = {
    v: 1,
    started_at: rs.started_at,
    ended_at: now.toISOString(),
    flags: {},
    agent: rs.agent ?? null,
    review_agent: rs.review_agent ?? null,
    workers: Math.max(1, ...cycles.map((c) => c.slot)),
    attempted: rs.attempted_cycles ?? cycles.length,
    completed: rs.completed_cycles ?? 0,
    tokens: rs.total_tokens ?? 0,
    cost_usd: rs.total_cost_usd ?? 0,
    stop_reason: rs.stop_reason ?? null,
    exit_code: 0,
    paused_ms: 0,
    idle_ms: 0,
    cycles,
    blockers: (rs.skipped ?? []).map((s) => ({id: s.id, title: '', reason: s.reason, attempts: s.attempts})),
    log: rs.log ?? null,
  }
  return {runs: [...history.runs, current], skipped_lines: history.skipped_lines}
}

/**
 * With `--remote`, the fleet's night (SPEC 22.2): every host's pushed run records
 * (report/fleet.ts, as `helix report --remote` reads them) joined with this
 * checkout's own history, which holds this host's runs before they are pushed. A
 * run in both counts once (same host and start).
 */
export function withFleetRuns(history: History, fleet: History | null): History {
  if (!fleet) return history
  const key = (r: RunHistoryRecord) => `${r.host ?? ''}\u0000${r.started_at}`
  const seen = new Set(fleet.runs.map(key))
  return {runs: [...fleet.runs, ...history.runs.filter((r) => !seen.has(key(r)))], skipped_lines: history.skipped_lines}
}

/** The night's report: the history (and the run in progress) of the last 24 hours; with `fleet`, every host's. */
export function nightReport(history: History, rs: RunState | null, now: Date, fleet: History | null = null): Report {
  return buildReport(withCurrentRun(withFleetRuns(history, fleet), rs, now), new Date(now.getTime() - NIGHT_MS), now)
}
