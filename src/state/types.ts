/** `.ddx/run-state.json` (SPEC 7.3). Written by `helix run`, read by `helix status`. */

export type StopReason =
  | 'completed'
  | 'max_cycles'
  | 'blocked'
  | 'error'
  | 'interrupted'
  /** SPEC 14.2: the agent is unavailable (exit 4) */
  | 'agent_unavailable'
  /** SPEC 14.3: the quota reset is beyond --max-quota-wait (exit 4) */
  | 'quota'
  /** SPEC 14.6: --max-tokens / --max-cost reached (exit 0) */
  | 'budget'

export type CycleOutcome =
  | 'COMPLETE'
  | 'SALVAGED'
  | 'DRIFT'
  | 'DECOMPOSED'
  | 'FAILED'
  | 'NOT_COMPLETED'
  | 'STALLED'
  | 'TIMEOUT'
  /** SPEC 15.2: completed but could not be landed on the base */
  | 'NOT_LANDED'

export interface CycleRecord {
  n: number
  bead: string
  outcome: CycleOutcome
  started_at: string
  ended_at: string
  duration_ms: number
  tokens: number
  rc: number | null
  /** worker slot (1-based; 1 when --workers 1) */
  slot?: number
  title?: string
  /** why a cycle did not complete (the failure line, `bead still open`, the landing conflict…) */
  reason?: string | null
  cost_usd?: number
  /** commits the cycle put on the base (landed) or made in the checkout */
  commits?: string[]
}

/** One busy worker slot (SPEC 15.4). */
export interface WorkerState {
  slot: number
  bead: string
  title?: string
  attempt: number
  started_at: string
  /** the worktree (null with --workers 1: the project checkout) */
  worktree: string | null
  branch: string | null
  /** the agent's pid, null between dispatches */
  pid: number | null
  timeout_s?: number
  last_output?: string | null
}

export interface SkippedBead {
  id: string
  reason: string
  attempts: number
}

export interface LastRun {
  started_at: string
  ended_at: string
  attempted_cycles: number
  completed_cycles: number
  total_tokens: number
  stop_reason: StopReason | null
}

export interface RunState {
  pid: number | null
  started_at: string | null
  updated_at: string
  phase: string
  agent: string | null
  review_agent: string | null
  current_cycle: number
  attempted_cycles: number
  completed_cycles: number
  closed_beads: string[]
  skipped: SkippedBead[]
  attempts: Record<string, number>
  /** bead id -> ISO time when it may be attempted again (backoff); helix extension used by status */
  backoff_until?: Record<string, string>
  current_bead: string | null
  current_bead_started_at: string | null
  focused_epic: string | null
  total_tokens: number
  cycles: CycleRecord[]
  stop_reason: StopReason | null
  last_run: LastRun | null
  parallel_run_denied_count: number
  /** session log of the run in progress (helix extension used by status) */
  log?: string | null
  /** SPEC 16.4: --max-cycles of the active run (null: unlimited) */
  max_cycles?: number | null
  /** SPEC 14.3: set while phase is "paused" */
  paused_until?: string | null
  pause_reason?: string | null
  /** SPEC 15.4: one entry per busy slot */
  workers?: WorkerState[]
  /** SPEC 14.6: cost the agents reported */
  total_cost_usd?: number
  /** SPEC 16.4: the in-flight agent's last output line (slot 1 / single worker) */
  last_output?: string | null
  /** the stop message (failure line of an unavailable agent, the quota reset…) */
  stop_message?: string | null
  /** supervisory beads the run filed (acceptance failures, review findings) — status's injected_supervisory */
  injected_supervisory?: Array<{id: string; type: string; triggering_cycle: number; triggering_bead: string; created_at: string}>
  /** SPEC 21.2: the run confines its agents with bubblewrap (`--sandbox`) */
  sandboxed?: boolean
}

/**
 * One line of `.helix-logs/runs.jsonl`, appended when a run stops (SPEC 16.5).
 * `helix report` reads these.
 */
export interface RunHistoryCycle {
  n: number
  slot: number
  bead: string
  title: string
  outcome: CycleOutcome
  reason: string | null
  started_at: string
  ended_at: string
  duration_ms: number
  tokens: number
  cost_usd: number
  commits: string[]
}

export interface RunHistoryRecord {
  v: 1
  started_at: string
  ended_at: string
  /** the flags the run was started with (names without dashes → values) */
  flags: Record<string, unknown>
  agent: string | null
  review_agent: string | null
  workers: number
  attempted: number
  completed: number
  tokens: number
  cost_usd: number
  stop_reason: StopReason | null
  /** the stop in words (the error line, the failure, the quota reset); absent in older records */
  stop_message?: string | null
  exit_code: number
  /** time spent in quota pauses */
  paused_ms: number
  /** time no agent was running (backoff sleeps, waiting for a slot's dependency) */
  idle_ms: number
  cycles: RunHistoryCycle[]
  blockers: Array<{id: string; title: string; reason: string; attempts: number}>
  log: string | null
  /** SPEC 19.5: `--remote` runs name their host (HELIX_HOST or the host name) and the remote */
  host?: string
  remote?: string
}
