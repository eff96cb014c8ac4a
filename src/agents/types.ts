/** Shapes shared by the agent runners, prompt builders and the run loop (SPEC 3). */

export type AgentKind = 'codex' | 'claude' | 'command'

export type ActionName = 'implementation' | 'check' | 'alignment' | 'backfill' | 'plan' | 'polish' | 'review' | 'resolve'

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
  /** SIGTERM → SIGKILL grace in ms (default 10 000, SPEC 3; HELIX_KILL_GRACE_MS overrides for tests) */
  killGraceMs?: number
  /** kill the agent after this many seconds without progress (SPEC 14.4); 0 or undefined disables */
  stallTimeoutSec?: number
  /** HELIX_DISPATCH_ID for this dispatch (SPEC 14.5); the runner makes one when absent */
  dispatchId?: string
  /** the agent's working directory when it is not `root` (a worker's git worktree, SPEC 15.1) */
  cwd?: string
  /**
   * the worker slot (1-based) with `--workers` > 1 (SPEC 15.4): the dispatch's session-log
   * records then carry `slot` and `bead`, so a pointer names one slot's records. Unset with one
   * worker, so its log stays as it was.
   */
  slot?: number
  /** called once with the agent's pid when it has been spawned (run-state `workers[].pid`) */
  onSpawn?: (pid: number) => void
  /**
   * SPEC 21 `--sandbox`: turns the agent's argv and environment into the confined
   * ones (proc/sandbox.ts). The watchdog stays outside, in the same process group.
   */
  confine?: Confine
}

/** SPEC 21: turns an argv and environment into confined ones (proc/sandbox.ts `confineAt`) */
export type Confine = (argv: string[], env: NodeJS.ProcessEnv, cwd: string) => {argv: string[]; env: NodeJS.ProcessEnv}

/**
 * What a dispatch says about the agent itself, apart from the bead (SPEC 14.1).
 * `unavailable` stops the run (exit 4); `quota` pauses it. Neither counts against
 * the bead.
 */
export type AgentHealth =
  | {kind: 'ok'}
  | {kind: 'unavailable'; reason: string}
  | {kind: 'quota'; /** ISO time of the reset, null when the agent gave none */ resetAt: string | null; message: string}

/**
 * What the output said about the agent and the attempt (SPEC 14.1). Every
 * dispatch has one, read once the output has ended.
 */
export interface AgentVerdict {
  /** `unavailable` stops the run (exit 4), `quota` pauses it */
  health: AgentHealth
  /** the decoded output says the attempt failed whatever the exit code (claude is_error, codex turn.failed) */
  failed: boolean
  /** the agent's own error text when it gave one (claude `result` with is_error, codex turn.failed/error), else the last non-blank output line; null when none */
  failureLine: string | null
  /** cost in USD the agent reported (claude total_cost_usd, command COST_USD), 0 when none */
  costUsd: number
  /** false when the agent reported no token count (then `0 tokens` is not printed, SPEC 16.3) */
  tokensReported: boolean
  /** the last output line that counted as progress (status shows it); null when none */
  lastLine: string | null
  /** false when the output held only start events and transient notices; undefined when the decoder does not say */
  progressed?: boolean
}

/**
 * The verdict of a decoder that judges nothing: healthy, not failed, no failure
 * line, no cost; its token count is printed as counted.
 */
export const PLAIN_VERDICT: AgentVerdict = Object.freeze({health: Object.freeze({kind: 'ok'}), failed: false, failureLine: null, costUsd: 0, tokensReported: true, lastLine: null})

/**
 * How one dispatch ended — exactly one of five:
 * - `exited`: the agent ended by itself (`rc` is its exit code, or 128+signal);
 * - `timeout`: helix killed it at `--timeout` (SPEC 3);
 * - `stalled`: the stall guard killed it after `afterSec` without progress (SPEC 14.4);
 * - `aborted`: the run was interrupted (the abort signal) and the group was killed;
 * - `spawn-failed`: it never started (`rc` 127; `why` says what was missing).
 */
export type DispatchEnd =
  | {end: 'exited'}
  | {end: 'timeout'; afterSec: number}
  | {end: 'stalled'; afterSec: number}
  | {end: 'aborted'}
  | {end: 'spawn-failed'; why: string}

export type DispatchEndKind = DispatchEnd['end']

interface DispatchFacts {
  rc: number
  /** the agent's final text (claude: the `result` event; others: the whole output) */
  text: string
  tokens: number
  durationMs: number
  /** 1-based inclusive line numbers of this dispatch's agent output in the session log; null when no line was written */
  logRange: {first: number; last: number} | null
  /** the argv used (for logs / --dry-run) */
  argv: string[]
  /** this dispatch's number in the session log (`dispatch` field of its records) */
  dispatch?: number
  /** the HELIX_DISPATCH_ID the agent ran with */
  dispatchId?: string
  /** what the output said (always present) */
  verdict: AgentVerdict
}

/** One agent call's result: how it ended (`end`), plus the facts and the required verdict. */
export type DispatchResult = DispatchFacts & DispatchEnd

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

/** SPEC 20.4: the repair the resolve action is given */
export interface ResolveBrief {
  kind: 'conflict' | 'check'
  /** the base tip the attempt must descend from */
  baseTip: string
  /** the attempt's branch */
  branch: string
  /** the attempt's commits (`<sha> <subject>`, oldest first) */
  commits: string[]
  /** conflict: the conflicted paths */
  paths?: string[]
  /** check: the land check's command and its last lines */
  check?: string
  tail?: string[]
  /** the land check's log, outside the tracked files */
  logFile?: string | null
  /** the previous round's verification problem, when one failed */
  problem?: string
}
