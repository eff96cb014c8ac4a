/** Shapes shared by the agent runners, prompt builders and the run loop (SPEC 3). */

export type AgentKind = 'codex' | 'claude' | 'command'

export type ActionName = 'implementation' | 'check' | 'alignment' | 'backfill' | 'plan' | 'polish' | 'review'

export interface AgentSpec {
  kind: AgentKind
  /** what the user named: 'codex', 'claude' or the command path */
  name: string
  /** resolved executable path */
  path: string
}

export interface DispatchRequest {
  agent: AgentSpec
  action: ActionName
  prompt: string
  /** project root: the agent's cwd */
  root: string
  model?: string
  effort?: string
  timeoutSec: number
  beadId?: string
  claimToken?: string
  /** extra environment on top of process.env */
  env?: Record<string, string>
  /** the session log the agent output goes to */
  log: SessionLogLike
  /** called with each condensed output line (normal mode prints these) */
  onLine?: (line: string) => void
  /** aborting kills the agent's process group (SIGTERM, SIGKILL after 10 s) */
  signal?: AbortSignal
  /** SIGTERM → SIGKILL grace in ms (default 10 000, SPEC 3); tests may shorten it */
  killGraceMs?: number
}

export interface DispatchResult {
  rc: number
  timedOut: boolean
  /** the agent's final text (claude: the `result` event; others: the whole output) */
  text: string
  tokens: number
  durationMs: number
  /** 1-based inclusive line numbers of this dispatch's agent output in the session log; null when no line was written */
  logRange: {first: number; last: number} | null
  /** the argv used (for logs / --dry-run) */
  argv: string[]
  /** true when req.signal aborted the dispatch (the group was killed) */
  aborted?: boolean
  /** this dispatch's number in the session log (`dispatch` field of its records) */
  dispatch?: number
}

export interface SessionLogLike {
  readonly path: string
  /** number of lines written so far */
  readonly lines: number
  event(msg: string, fields?: Record<string, unknown>, level?: 'info' | 'warn' | 'error' | 'debug'): void
  agentLine(line: string, fields?: Record<string, unknown>): void
  close(): void
}

export interface AgentRunner {
  dispatch(req: DispatchRequest): Promise<DispatchResult>
}
