/**
 * Shared body of `helix run` and `helix build`: flag limits validated first
 * (nothing written on bad input), signals → abort, real wiring, runLoop. Kept
 * out of src/commands so the oclif commands stay thin.
 */
import {killAllAgentGroups} from '../proc/groups.js'
import {armRunSignals, type RunSignals} from './run-signals.js'
import type {Confine} from '../agents/types.js'
import {parseRunLimits, type LimitFlags} from './run-limits.js'
import {runLoop} from '../loop/orchestrator.js'
import {OfflineAbort} from '../loop/stop.js'
import type {LoopNotifier, LoopOptions} from '../loop/ports.js'
import {attachLanding, realLoopDeps, type WiringInput} from '../app/wiring.js'
import {sandboxOptions} from '../app/sandbox-options.js'
import {createNotifier} from '../output/notify.js'
import {inspectCheckout} from '../git/where.js'
import {HelixError, EXIT} from '../util/errors.js'
import {parsePrFlags, type PrFlagInput} from './pr-flags.js'
import {sanitize} from '../util/sanitize.js'
import type {LandCheckSpec} from '../landing/land-check.js'

/**
 * With workers, the run's first attempts start this far apart. Started together they
 * finish together, and the slots then wait on each other's landings round after round;
 * measured on the workers bench (docs/performance.md, "Session 29").
 */
const START_SPACING_MS = 300

export interface LoopCliInput extends WiringInput {
  options: Omit<LoopOptions, 'signal' | 'timeoutSec'>
  /**
   * runs once every flag is checked and before anything starts (the review preflight,
   * --save-config); `signal` is the run's abort (a SIGTERM meanwhile ends what it started),
   * `confine` the sandbox's confinement for the preflight's probe (SPEC 21)
   */
  beforeStart?: (signal: AbortSignal, confine?: Confine) => Promise<void>
  /** `--keep-preserved DAYS` */
  keepPreserved?: string
  /** `helix run`'s limit flags (workers, stall, budgets, quota wait, notify); env fills the rest */
  limits?: LimitFlags
  /** SPEC 19: `--remote <name>`, `--lease`, `--max-offline` */
  remote?: {remote?: string; lease?: string; 'max-offline'?: string}
  /** SPEC 21: `--sandbox`, `--sandbox-network` (HELIX_SANDBOX / the config fill them) */
  sandbox?: {sandbox?: boolean; 'sandbox-network'?: string}
  /** SPEC 20.5 (--land pr): `--pr-auto-merge`, `--pr-wait`, `--pr-poll`, `--pr-command` */
  pr?: PrFlagInput
}

/** The notifier (SPEC 14.6); createNotifier validates the command (HelixError 1 when it cannot run). */
function makeNotifier(argv: string[], cwd: string, env: NodeJS.ProcessEnv, log: (line: string) => void): LoopNotifier {
  return createNotifier(argv.join(' '), {log, env, cwd})
}

/** `--keep-preserved` / HELIX_KEEP_PRESERVED: whole days >= 0, default 7 */
function parseKeepPreserved(flag: string | undefined, env: NodeJS.ProcessEnv): number {
  const raw = flag ?? env.HELIX_KEEP_PRESERVED
  if (raw === undefined || raw.trim() === '') return 7
  const n = Number(raw.trim())
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(n)) throw new HelixError(`invalid ${flag !== undefined ? '--keep-preserved' : 'HELIX_KEEP_PRESERVED'} '${sanitize(raw).slice(0, 40)}': expected whole days, 0 or more`, EXIT.ERROR)
  return n
}

/** Runs the loop with SIGINT/SIGTERM handling; returns the exit code. */
export async function runLoopCli(input: LoopCliInput): Promise<number> {
  // The handlers are in before anything of the run is checked, started or written (the
  // command armed them at its start already; this is the same controller): a signal from
  // here on ends in the orderly way (exit 130 / 143 / 129, agents' groups ended, attempts
  // preserved), never by the signal itself. A signal before the loop starts leaves it to
  // stop at its first check, which prints the interrupted and run-complete lines.
  const signals = armRunSignals()
  try {
    return await runArmed(input, signals)
  } finally {
    signals.dispose()
    killAllAgentGroups('SIGKILL')
  }
}

async function runArmed(input: LoopCliInput, signals: RunSignals): Promise<number> {
  const once = input.options.once !== undefined
  // bad input first: one line naming the flag, nothing on disk changed
  const limits = parseRunLimits(input.limits ?? {}, input.env)
  // SPEC 19: the remote flags are bad input too; the remote module loads only when used
  const remoteFlags = input.remote ? (await import('../app/remote-wiring.js')).parseRemoteFlags(input.remote) : null
  // SPEC 20.5: --land pr needs --remote, and its own flags are bad input too
  const prParsed = parsePrFlags(limits.land, input.pr ?? {}, input.env, remoteFlags !== null)
  const prFlags = prParsed ? {...prParsed, resolveAttempts: limits.resolveAttempts} : null
  const workers = once ? 1 : limits.workers
  const keepDays = parseKeepPreserved(input.keepPreserved, input.env)
  const where = await inspectCheckout(input.cwd, input.env)
  if (where.problem) throw new HelixError(where.problem, EXIT.ERROR)
  // SPEC 21.2: a sandbox that cannot work here is refused before anything is claimed
  // the wiring (bubblewrap, clones, the sandboxed landing) loads only for a sandboxed run
  const {loadConfig} = await import('../config/project-config.js')
  const sandbox = input.sandbox && !once ? sandboxOptions(input.sandbox, input.env, loadConfig(input.cwd)) : null
  const sandboxing = sandbox ? await import('../app/sandbox-wiring.js') : null
  if (sandbox && sandboxing && !input.options.dryRun) sandboxing.refuseWithoutSandbox(sandbox, input.env)
  // SPEC 21.1: the hooks helix's own git runs (the rebase, the fast-forward, ref updates) run confined too:
  // after a landing they may be the agent's files (a hooks directory kept in the tree)
  const env = sandbox && sandboxing && !input.options.dryRun ? sandboxing.confineHooks(input.cwd, sandbox, input.env) : input.env
  const ac = signals
  if (!ac.signal.aborted) {
    try {
      await input.beforeStart?.(ac.signal, sandbox && sandboxing && !input.options.dryRun ? sandboxing.preflightConfine(sandbox) : undefined)
    } catch (error) {
      // a preflight cut short by the signal: the loop reports the interruption below
      if (!ac.signal.aborted) throw error
    }
  }
  const real = realLoopDeps({...input, env, signal: ac.signal})
  const {deps, timeoutSec} = real
  // SPEC 20.3: the land check gates worktree attempts; say so when this run has none to gate
  // (a --remote or --sandbox run gives every attempt a workspace of its own, so its landings are always checked)
  if (limits.landCheck && workers === 1 && !remoteFlags && !sandbox && !input.options.dryRun)
    deps.out.both('helix: --land-check applies to worktree attempts (--workers 2 or more); with one worker the agent works in your checkout and nothing lands, so no check runs')
  const landCheck: Omit<LandCheckSpec, 'env'> | undefined = limits.landCheck ? {command: limits.landCheck, timeoutSec: limits.landCheckTimeoutSec, stallSec: limits.stallTimeoutSec, signal: ac.signal} : undefined
  if (limits.notify && !input.options.dryRun) deps.notify = makeNotifier(limits.notify, input.cwd, input.env, (line) => deps.out.normal(line))
  let fleet: {offlineExceeded(): boolean; close(): Promise<void>} | null = null
  // SPEC 19: a --remote run lands through the remote (it reconciles its own leftovers the same way)
  const dry = input.options.dryRun === true
  if (remoteFlags && !dry) fleet = await (await import('../app/remote-wiring.js')).attachRemote(real, remoteFlags, env, () => ac.abort(new OfflineAbort(`the remote ${sanitize(remoteFlags.remote)} was unreachable for more than ${remoteFlags.maxOfflineSec}s (--max-offline)`)), false, prFlags, landCheck, where.facts)
  // SPEC 18.2: every run (and --dry-run, which lists it) reconciles what a --workers run left behind
  else if (!once) await attachLanding(real, env, dry ? undefined : keepDays, landCheck, where.facts)
  if (sandbox && sandboxing && !dry) {
    const attempts = sandboxing.attachSandbox(real, sandbox, env, timeoutSec)
    // SPEC 20.3: the land check runs the agent's code, so it runs in the sandbox too (its worktree writable)
    if (landCheck) landCheck.confine = sandboxing.checkConfine(sandbox, attempts)
  }
  // --dry-run --remote previews the remote's queue (at its fetched tip, live claims shown), not the local tracker
  if (remoteFlags && dry) await (await import('../app/remote-wiring.js')).attachRemote(real, remoteFlags, input.env, () => {}, true)
  const r = await runLoop(deps, {
    ...input.options,
    signal: ac.signal,
    timeoutSec,
    workers,
    startSpacingMs: START_SPACING_MS,
    // --land pr lands through the remote's pull-request landing port; the loop's own landing step is 'ff'
    land: limits.land === 'pr' ? 'ff' : limits.land,
    stallTimeoutSec: limits.stallTimeoutSec,
    resolveAttempts: limits.resolveAttempts,
    ...(limits.landCheck ? {landCheck: limits.landCheck} : {}),
    ...(limits.maxTokens !== undefined ? {maxTokens: limits.maxTokens} : {}),
    ...(limits.maxCost !== undefined ? {maxCost: limits.maxCost} : {}),
    ...(limits.maxBeadTokens !== undefined ? {maxBeadTokens: limits.maxBeadTokens} : {}),
    ...(limits.maxBeadCost !== undefined ? {maxBeadCost: limits.maxBeadCost} : {}),
    maxQuotaWaitSec: limits.maxQuotaWaitSec,
    ...(sandbox ? {sandboxed: true, flags: {...(input.options.flags ?? {}), sandbox: true, 'sandbox-network': sandbox.network}} : {}),
  })
  await fleet?.close()
  // SPEC 19.4: past --max-offline the run stops with every attempt preserved, exit 4
  if (fleet?.offlineExceeded()) return EXIT.AGENT_UNAVAILABLE
  return r.exitCode
}
