/**
 * What `helix dashboard` (SPEC 22.1) sends to its page: one JSON document, the whole
 * state, pushed over Server-Sent Events whenever it changes. Every string in it is
 * untrusted data; the page inserts it as text only (textContent), never as markup.
 */
import type {FleetView} from '../operator/fleet.js'

/** One busy worker slot of the live run. */
export interface SlotView {
  slot: number
  bead: string
  title: string
  agent: string | null
  attempt: number | null
  /** ISO start of the attempt: the page counts the elapsed time from it */
  started_at: string | null
  timeout_s: number | null
  last_output: string | null
  log: LogLink | null
}

/** A range of a session log, served read-only by `/log/<project>/<file>?from=A&to=B[&slot=N]`. */
export interface LogLink {
  file: string
  from: number
  to: number
  slot: number | null
}

/** One bead of the current (or last) run, as the run-state file tells it. */
export interface RunBeadRow {
  bead: string
  title: string
  /** running, landed (closed by the cycle), or the last cycle's outcome in lower case */
  state: string
  attempts: number
  reason: string | null
  logs: LogLink[]
}

export interface QueueView {
  ready: Array<{id: string; title: string}>
  waiting: Array<{id: string; title: string; on: string[]}>
  blocked: Array<{id: string; title: string; reason: string}>
  closed_today: Array<{id: string; title: string}>
  /** held back by the live run, as status's Parked: backing off after failures (`until`: when it may be tried again) or skipped this run */
  held: Array<{id: string; title: string; reason: string; until: string | null}>
  /** SPEC 16.4 figures, as `helix status` computes them */
  counts: {closed: number; total: number; left: number; waiting: number; blocked: number; ready: number}
  /** how many beads each list above has in full; the lists carry at most `LIST_CAP` (project-view.ts) */
  lengths: {ready: number; waiting: number; blocked: number; closed_today: number; held: number}
  eta_s: number | null
}

export type EventKind = 'completed' | 'failed' | 'not_landed' | 'blocked' | 'paused'

export interface EventRow {
  at: string
  kind: EventKind
  /** the cycle's outcome (COMPLETE, FAILED, STALLED …), null for blocks and pauses */
  outcome: string | null
  bead: string | null
  title: string
  text: string
  /** a pause: when it ends (ISO) */
  until?: string
  log: LogLink | null
}

/**
 * A pull request awaiting merge (SPEC 20.5). The PR-landing branch fills these; until
 * it does, the list is empty and the page says so.
 */
export interface PullRequestRow {
  bead: string
  url: string
  age_s: number | null
  checks: 'pending' | 'passing' | 'failing' | null
  mergeable: boolean | null
}

export interface FleetPane {
  remote: string
  /** null until the first read; the last good view is kept while a read fails */
  view: FleetView | null
  error: string | null
  read_at: string | null
  pull_requests: PullRequestRow[]
}

export interface RunSummary {
  live: boolean
  pid: number | null
  started_at: string | null
  phase: string | null
  stop_reason: string | null
  /** an ended run: why, in words (`agent_unavailable (codex: not logged in …)`), as `helix status` says it */
  stopped: string | null
  completed: number
  attempted: number
  max_cycles: number | null
  tokens: number
  cost_usd: number | null
  elapsed_s: number | null
  mean_cycle_s: number | null
  paused_until: string | null
  pause_reason: string | null
  log: string | null
}

export interface ProjectView {
  /** index in the server's project list (the charts' and logs' URLs name it) */
  index: number
  name: string
  root: string
  /** a project that could not be read this time says why (the rest of the page goes on) */
  error: string | null
  run: RunSummary | null
  slots: SlotView[]
  run_beads: RunBeadRow[]
  queue: QueueView | null
  events: EventRow[]
  /** the night's totals (the report's model) */
  night: {runs: number; cycles: number; closed: number; failed: number; tokens: number}
  /** bumps whenever the charts change: the page reloads their images */
  chart_version: number
  fleet: FleetPane | null
}

export interface DashboardState {
  version: number
  generated_at: string
  projects: ProjectView[]
}
