/**
 * The effects the run loop needs, as ports. `runLoop` (orchestrator.ts) receives
 * all of them as arguments; `wiring.ts` builds the real ones, tests pass fakes.
 */
import type {ActionName, AgentSpec, DispatchResult, ResolveBrief, SessionLogLike} from '../agents/types.js'
import type {RunHistoryRecord, RunState} from '../state/types.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import type {LeftoverAttempt} from '../git/leftovers.js'
import type {ReconcileAction} from '../recovery/reconcile-plan.js'
import type {PendingReopen} from '../state/pending-reopens.js'

/** how an attempt that did not land is kept */
export interface PreserveOptions {
  /**
   * SPEC 20.1: the remote or the forge refused helix by its own rule, nothing of the bead's:
   * the attempt is not counted and no note is written (with --remote the claim still goes)
   */
  uncounted?: boolean
  /** SPEC 18.1a across a crash: see `OweReopen` */
  beforeRemove?: OweReopen
}

/**
 * SPEC 18.1a across a crash: the landing calls it once an attempt's work is kept (`ref`,
 * null when it changed nothing) and before its worktree and branch go. The loop records
 * there the reopen it owes a closed bead, so a run killed between the cleanup and its
 * reopen leaves the reopen to the next start instead of a closed bead with its work off
 * the base and nothing left to find it by. Never throws.
 */
export type OweReopen = (ref: string | null, reason: string) => Promise<void>

/** something the run waits for instead of draining: a bead backing off, one another host holds, a pull request */
export interface Waiting {
  /** when to look again */
  until: string
  /** what is waited for, in words (sanitized) */
  what?: string
}

export interface NewBeadInput {
  title: string
  issue_type?: string
  priority?: number
  labels?: string[]
  acceptance?: string
  description?: string
  'spec-id'?: string
}

/** `blocked`: the bead cannot be claimed until someone acts (a stray ref in the way): skipped for the run, named in the blocker report */
export type ClaimResult = {ok: true; token: string} | {ok: false; message: string; blocked?: boolean}

export interface LoopTracker {
  /** fresh read of the whole tracker (never cached across an agent call) */
  read(): Promise<TrackerSnapshot>
  /** ids of in_progress beads whose claim is stale (SPEC 2.4) */
  staleClaims(snap: TrackerSnapshot): Promise<Set<string>>
  /** compare-and-set claim by the supervisor; a conflict is `{ok: false}`, never a throw */
  claim(id: string): Promise<ClaimResult>
  unclaim(id: string): Promise<void>
  close(id: string): Promise<void>
  reopen(id: string, reason: string): Promise<void>
  appendNote(id: string, text: string): Promise<void>
  addLabel(id: string, label: string): Promise<void>
  setFields(id: string, fields: Record<string, unknown>): Promise<void>
  /** SPEC 14.6: adds a dispatch's spend to the bead's `helix-tokens` / `helix-cost` (under the lock) */
  addSpend(id: string, tokens: number, costUsd: number): Promise<void>
  create(input: NewBeadInput): Promise<string>
}

export interface PromptContext {
  beadId?: string
  batchIds?: string[]
  scope?: string
  contextMd?: string
  /** the project directory the prompt names, when not the project root (a worker's worktree, SPEC 15.1) */
  root?: string
  /** SPEC 20.4: the resolve action's repair */
  repair?: ResolveBrief
}

export interface DispatchArgs {
  agent: AgentSpec
  action: ActionName
  prompt: string
  beadId?: string
  claimToken?: string
  log: SessionLogLike
  onLine?: (line: string) => void
  signal?: AbortSignal
  /** the agent's cwd when not the project root (a worker's worktree, SPEC 15.1) */
  cwd?: string
  /** extra environment (DDX_BEAD_DIR for a worker) */
  env?: Record<string, string>
  /** SPEC 14.4 stall guard; 0/undefined disables */
  stallTimeoutSec?: number
  /** worker slot (1-based); set only with --workers > 1 (the log records then carry it) */
  slot?: number
  /** called once with the agent's pid after the spawn */
  onSpawn?: (pid: number) => void
  /** SPEC 21 `--sandbox`: confines the agent (set by the sandbox wiring, never by the loop) */
  confine?: (argv: string[], env: NodeJS.ProcessEnv, cwd: string) => {argv: string[]; env: NodeJS.ProcessEnv}
}

export interface LoopAgents {
  /** implementation agent */
  impl: AgentSpec
  /** review agent */
  review: AgentSpec
  /** SPEC 5.1 step 2: throws HelixError (exit 1) when a binary is missing */
  check(): void
  prompt(action: ActionName, ctx: PromptContext): Promise<string>
  dispatch(args: DispatchArgs): Promise<DispatchResult>
  /** the command line a dispatch would run (for --dry-run) */
  describe(agent: AgentSpec, action: ActionName, prompt: string): string
}

/**
 * Terminal lines. `normal` lines show only in normal mode, `summary` lines only in
 * summary mode, `both` lines (stop lines) always; `agent` is condensed agent output
 * (stdout, normal mode, not quiet). Every line also goes to the session log.
 */
export interface LoopOutput {
  normal(line: string): void
  summary(line: string): void
  both(line: string): void
  agent(line: string): void
  /** plain stdout (dry-run) */
  stdout(text: string): void
  /** attach the session log once it is open */
  attach(log: SessionLogLike): void
}

export interface LoopGates {
  /** absolute paths of executable scripts/check-acceptance-*.sh, sorted */
  acceptanceScripts(): Promise<string[]>
  /** exit code of a script run with cwd = root, or = `cwd` (a worker's worktree, whose own copy of the script runs) */
  runScript(file: string, cwd?: string): Promise<number>
  /** a marker of the worktree state at cycle start (git HEAD), null outside git */
  mark(): Promise<string | null>
  /** lines and files changed since the marker, in `dir` (a worker's worktree) when given, else root (committed + uncommitted + untracked files, minus what was already there at the marker), null when unknown */
  changedSince(mark: string | null, dir?: string): Promise<{lines: number; files: number} | null>
  /** true when a file (relative to root, or absolute) exists */
  exists(file: string): Promise<boolean>
  /** HEAD's commit, null outside git or before the first commit (run history, SPEC 16.5) */
  head?(): Promise<string | null>
  /** commits on HEAD since `sha`, oldest first */
  commitsSince?(sha: string | null): Promise<string[]>
}

export interface LoopMutex {
  acquire(): {ok: true} | {ok: false; holder: {pid: number; started: string}}
  release(): void
}

export interface LoopStateStore {
  load(): Promise<RunState | null>
  save(state: RunState): Promise<void>
  /** locked read-modify-write (state/run-state.ts updateRunState); optional for fakes */
  update?(fn: (state: RunState) => RunState): Promise<RunState>
}

export interface BlockerEntry {
  id: string
  title: string
  reason: string
  attempts: number
}

export interface LoopDeps {
  tracker: LoopTracker
  agents: LoopAgents
  out: LoopOutput
  gates: LoopGates
  mutex: LoopMutex
  state: LoopStateStore
  clock: {now(): Date}
  /** resolves after ms, or early when signal aborts */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
  /** opens this run's session log (called once, after the mutex is held) */
  openLog(): Promise<SessionLogLike>
  /** SPEC 5.9 orphan recovery; prints its own lines through `say` */
  recoverOrphans(say: (line: string) => void): Promise<{recovered: string[]}>
  /** renders .helix/context.md; writes it unless `write` is false; returns the text */
  context(snap: TrackerSnapshot, focusedEpic: string | null, write: boolean): Promise<string>
  /** writes the blocker report, returns its path */
  blockerReport(args: {now: Date; attempted: number; completed: number; logPath: string | null; entries: BlockerEntry[]}): Promise<string>
  /** helix's own pid (claims are the supervisor's) */
  pid: number
  env: NodeJS.ProcessEnv
  /** SPEC 14.6 `--notify`: never fatal, bounded by the notifier itself */
  notify?: LoopNotifier
  /** SPEC 16.5: one record appended to `.helix-logs/runs.jsonl` when the run stops */
  history?: {append(record: RunHistoryRecord): Promise<void>}
  /**
   * at the end of a run, what the operator should know about the checkout's own
   * tracker file (`.ddx/beads.jsonl` left modified by the run's claims and closes), or null
   */
  trackerFileNote?: () => Promise<string | null>
  /** SPEC 15: worktrees and landing; required when `workers` > 1 */
  landing?: LoopLanding
  /** SPEC 16.1: appends helix's runtime lines to .gitignore; returns the lines it added */
  ignoreRuntime?: () => string[]
  /** the tracker directory (`.ddx/`) a worker's agent gets as DDX_BEAD_DIR */
  trackerDir?: string
  /**
   * SPEC 19 (--remote): beads another host holds, waited for like backing-off beads instead of
   * draining. `what` says in words what is waited for, with when that wait ends as a clock time
   * where helix knows it (sanitized; the same words while nothing changes, so the wait is said once)
   */
  remoteWaiting?: () => ReadonlyArray<Waiting>
  /** SPEC 19 (--remote): every attempt runs in a worktree, also with one slot */
  alwaysWorktree?: boolean
  /** SPEC 20.5 (--land pr): pull requests still awaiting merge, counted in the run-complete line */
  awaitingMerge?: () => number
}

export type NotifyEventName = 'run_stopped' | 'bead_blocked' | 'paused' | 'resumed' | 'agent_unavailable'

/** One JSON event on the notifier's stdin (SPEC 14.6). */
export interface NotifyEvent {
  event: NotifyEventName
  at: string
  [field: string]: unknown
}

export interface LoopNotifier {
  send(event: NotifyEvent): Promise<void>
}

export interface LoopOptions {
  maxCycles: number
  summary: boolean
  reviewEvery: number
  reviewThreshold: number
  autoReview: boolean
  autoAlign: boolean
  dryRun: boolean
  signal?: AbortSignal
  /** `helix build [selector]`: one implementation cycle, no queue drain */
  once?: {selector?: string}
  /** agent timeout in seconds (for the timeout line) */
  timeoutSec?: number
  /** name used in the mutex message: `helix run` or `helix build` */
  commandName?: string
  /** SPEC 15: parallel worker slots (default 1: the agent works in the project checkout) */
  workers?: number
  /** with workers: how far apart the run's first attempts start, in ms (default 0) */
  startSpacingMs?: number
  /** `--land none`: keep each completed attempt's branch instead of landing it */
  land?: 'ff' | 'none'
  /** SPEC 20.3 `--land-check`: the command (named in the resolve prompt; the landing runs it) */
  landCheck?: string
  /** SPEC 20.4 `--resolve-attempts`: failed resolve rounds allowed per landing (default 2, 0 disables) */
  resolveAttempts?: number
  /** SPEC 14.4 stall guard in seconds (0 disables) */
  stallTimeoutSec?: number
  /** SPEC 14.6 budgets (undefined: none) */
  maxTokens?: number
  maxCost?: number
  /** SPEC 14.6 per-bead caps, summed over all attempts and runs (undefined: none) */
  maxBeadTokens?: number
  maxBeadCost?: number
  /** SPEC 14.3 bound of one quota pause, seconds (default 21600) */
  maxQuotaWaitSec?: number
  /** the flags the run started with, for runs.jsonl (SPEC 16.5) */
  flags?: Record<string, unknown>
  /** SPEC 21.2: the run is sandboxed (recorded in run-state for `helix status`) */
  sandboxed?: boolean
}

export interface LoopResult {
  exitCode: number
  stopReason: RunState['stop_reason']
}

/**
 * One attempt's git worktree with `--workers` > 1 (SPEC 15.1). `dir` is the
 * agent's cwd; `branch` is `helix/<id>-<attempt>`; `baseTip` the base commit it
 * was made from.
 */
export type {LeftoverAttempt, PendingReopen}

export interface Workspace {
  slot: number
  bead: string
  attempt: number
  dir: string
  branch: string
  baseTip: string
  /** SPEC 19.2 (--remote): the worktree's own tracker directory, the agent's DDX_BEAD_DIR; unset: the run's shared tracker */
  trackerDir?: string
}

/**
 * SPEC 20.4: what a landing left for the agent to repair, the worktree kept as it is.
 * `onto`: the base tip the candidate was rebased onto (the resolve's base tip).
 */
export type Repair =
  | {kind: 'conflict'; onto: string; paths: string[]}
  | {kind: 'check'; onto: string; rc: number; tail: string[]; logFile: string | null}

/** SPEC 20.3: one run of the land check, told to the loop for its lines */
export interface LandCheckEvent {
  passed: boolean
  rc: number
  ms: number
  /** the check's last lines (at most 40) */
  tail: string[]
  /** `timeout` / `stall` when helix ended it */
  ended?: 'timeout' | 'stall'
  /** the base tip it checked against */
  onto: string
}

export type LandResult =
  /** `pr` (SPEC 20.5, --land pr): the attempt ended at "pull request opened"; the bead awaits its merge */
  | {landed: true; sha: string; commits: string[]; pr?: {url: string}}
  /**
   * `refused` (SPEC 20.1): the remote refuses helix's push by its own rule (a hook, a protected
   * branch), or the forge refuses helix the right to open pull requests: nothing of the bead's.
   * The line the run stops with: what refused in its own words, where the work is kept, the fix.
   * `unavailable`: not a refusal but a forge that could not be reached past --max-offline (exit 4, as 19.4)
   */
  | {landed: false; reason: string; preservedRef: string | null; checkTail?: string[]; repair?: undefined; refused?: string; unavailable?: true}
  /** SPEC 20.4: needs repair; the worktree is left as it is (nothing preserved yet) */
  | {landed: false; reason: string; preservedRef: null; repair: Repair; checkTail?: undefined; refused?: undefined}

export interface LandOptions {
  /** SPEC 20.4: a conflict or a failing land check leaves the worktree in place and returns `repair` (else: not landed, preserved) */
  repair?: boolean
  /** SPEC 20.3: told of every land-check run */
  onCheck?: (ev: LandCheckEvent) => void
  /** SPEC 20.3: HELIX_ATTEMPT of the check's environment */
  attemptNo?: number
  /** SPEC 20.5: what a pull request's body says about the attempt */
  info?: LandInfo
  /**
   * SPEC 5.10/14.5: the run's stop. A landing that waits (lost races, the land lock, a
   * land check) ends at once when it aborts: not landed, reason `interrupted`, work preserved
   */
  signal?: AbortSignal
  /** SPEC 18.1a: given to the preserve of an attempt that does not land (`OweReopen`) */
  beforeRemove?: OweReopen
}

/** SPEC 20.5: what a pull request's body says about the attempt (a landing that moves the base ignores it) */
export interface LandInfo {
  /** the agent's final text (its summary) */
  summary?: string
  /** the review's verdict, when a review ran */
  review?: string
}

/**
 * Worktrees and landing (SPEC 15.1–15.2), a port so the scheduler is unit-tested
 * with fakes. The real one (`src/landing/local.ts`) runs git without a shell; every method
 * is safe to call once per workspace, in any order after `prepare`.
 */
export interface LoopLanding {
  /** the base branch checked out in the project root; throws HelixError(1) on a detached HEAD or outside git */
  base(): Promise<string>
  /** writes helix's runtime paths to .git/info/exclude (shared by every worktree), idempotently */
  ensureExcludes(): Promise<void>
  /** `git worktree add -b helix/<id>-<attempt> .helix/worktrees/<id>-<attempt> <base tip>` */
  prepare(bead: string, attempt: number, slot: number, meta?: Record<string, unknown>): Promise<Workspace>
  /**
   * Under the land lock: refuse commits that touch `.ddx/`, rebase onto the current
   * base tip, fast-forward the base (merge --ff-only in the root, else update-ref
   * compare-and-set). Landed: worktree and branch removed. Not landed: the work is
   * preserved (as `preserve`) and the reason says why (`conflict in a.ts`, …).
   */
  land(ws: Workspace, opts?: LandOptions): Promise<LandResult>
  /**
   * SPEC 20.4: after a resolve call, is the worktree what done means? HEAD on the
   * attempt's branch and descending from `repair.onto`, no rebase or merge in
   * progress, no conflict marker in a path that conflicted, leftovers committed.
   * null when it is; else what is wrong (one line).
   */
  verifyRepair?(ws: Workspace, repair: Repair): Promise<string | null>
  /** the attempt's commits on top of `onto` (`<short sha> <subject>`, oldest first), for the resolve prompt */
  commitsOf?(ws: Workspace, onto: string): Promise<string[]>
  /**
   * An attempt that ends without landing: commit uncommitted work onto the branch
   * (`helix: uncommitted work of <id> attempt <n>`), keep it on
   * `refs/helix/preserved/<id>/<attempt>`, remove worktree and branch. Returns the
   * ref, or null when the attempt changed nothing.
   */
  preserve(ws: Workspace, reason: string, opts?: PreserveOptions): Promise<string | null>
  /** `--land none`: remove the worktree, keep the branch; returns the branch name */
  keepBranch(ws: Workspace): Promise<string>
  /** the newest preserved ref of a bead, named in the next prompt (null when none) */
  preservedRef(bead: string): Promise<string | null>
  /** SPEC 18.2: every helix worktree and `helix/<id>-<n>` branch (at run start no other run owns one) */
  leftovers?(): Promise<LeftoverAttempt[]>
  /** a leftover to finish: its worktree on its branch; null when it cannot be landed as is (then preserve it) */
  adopt?(l: LeftoverAttempt, slot: number): Promise<Workspace | null>
  /** a leftover whose work is already on the base: remove worktree and branch */
  discard?(l: LeftoverAttempt): Promise<void>
  /** a leftover not to finish: as `preserve` */
  preserveLeftover?(l: LeftoverAttempt): Promise<string | null>
  /**
   * SPEC 20.2: the remote's judgement of each leftover (a `--remote` landing asks the
   * remote for claims and the base tip); without it reconciliation plans from the tracker
   */
  planLeftovers?(items: LeftoverAttempt[]): Promise<ReconcileAction[]>
  /** the git remote this landing lands on (`--remote <name>`); absent for a local landing */
  remote?: string
  /** resolves once work a landing left running is done (a landed attempt's worktree and branch removed) */
  settled?(): Promise<void>
  /** prune preserved refs of beads that landed more than --keep-preserved days ago */
  prunePreserved?(say: (line: string) => void): Promise<void>
  /** reopens that could not be written (SPEC 18.1a), finished at the next start */
  pending?: {list(): Promise<PendingReopen[]>; add(p: PendingReopen): Promise<void>; remove(bead: string): Promise<void>}
}
