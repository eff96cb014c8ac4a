/** `.ddx/run-state.json` (SPEC 7.3). Written by `helix run`, read by `helix status`. */

export type StopReason = 'completed' | 'max_cycles' | 'blocked' | 'error' | 'interrupted'

export type CycleOutcome = 'COMPLETE' | 'SALVAGED' | 'DRIFT' | 'DECOMPOSED' | 'FAILED' | 'NOT_COMPLETED'

export interface CycleRecord {
  n: number
  bead: string
  outcome: CycleOutcome
  started_at: string
  ended_at: string
  duration_ms: number
  tokens: number
  rc: number | null
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
  /** supervisory beads the run filed (acceptance failures, review findings) — status's injected_supervisory */
  injected_supervisory?: Array<{id: string; type: string; triggering_cycle: number; triggering_bead: string; created_at: string}>
}
