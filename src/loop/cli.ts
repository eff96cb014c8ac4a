/**
 * Shared body of `helix run` and `helix build`: flag limits validated first
 * (nothing written on bad input), signals → abort, real wiring, runLoop. Kept
 * out of src/commands so the oclif commands stay thin.
 */
import {killAllAgentGroups} from '../agents/runner.js'
import {parseRunLimits, type LimitFlags} from './limits.js'
import {runLoop} from './orchestrator.js'
import type {LoopNotifier, LoopOptions} from './ports.js'
import {attachLanding, realLoopDeps, type WiringInput} from './wiring.js'
import {createNotifier} from './notify.js'
import {EXIT} from '../util/errors.js'

export interface LoopCliInput extends WiringInput {
  options: Omit<LoopOptions, 'signal' | 'timeoutSec'>
  /** `helix run`'s limit flags (workers, stall, budgets, quota wait, notify); env fills the rest */
  limits?: LimitFlags
  /** h4, SPEC 19: `--remote <name>`, `--lease`, `--max-offline` */
  remote?: {remote?: string; lease?: string; 'max-offline'?: string}
}

/** The notifier (SPEC 14.6); createNotifier validates the command (HelixError 1 when it cannot run). */
function makeNotifier(argv: string[], cwd: string, env: NodeJS.ProcessEnv, log: (line: string) => void): LoopNotifier {
  return createNotifier(argv.join(' '), {log, env, cwd})
}

/** Runs the loop with SIGINT/SIGTERM handling; returns the exit code. */
export async function runLoopCli(input: LoopCliInput): Promise<number> {
  const once = input.options.once !== undefined
  // bad input first: one line naming the flag, nothing on disk changed
  const limits = parseRunLimits(input.limits ?? {}, input.env)
  // h4 (SPEC 19): the remote flags are bad input too; the remote module loads only when used
  const remoteFlags = input.remote ? (await import('./remote-wiring.js')).parseRemoteFlags(input.remote) : null
  const workers = once ? 1 : limits.workers
  const ac = new AbortController()
  const real = realLoopDeps({...input, signal: ac.signal})
  const {deps, timeoutSec} = real
  if (limits.notify && !input.options.dryRun) deps.notify = makeNotifier(limits.notify, input.cwd, input.env, (line) => deps.out.normal(line))
  let fleet: {offlineExceeded(): boolean; close(): Promise<void>} | null = null
  if (remoteFlags && !input.options.dryRun) fleet = await (await import('./remote-wiring.js')).attachRemote(real, remoteFlags, input.env, () => ac.abort('SIGTERM'))
  else if (workers > 1 && !input.options.dryRun) await attachLanding(real, input.env)
  let signals = 0
  const onSignal = (sig: NodeJS.Signals) => {
    signals++
    if (!ac.signal.aborted) ac.abort(sig)
    // the runner's abort sends SIGTERM to the agent's group and SIGKILL 10 s later;
    // a second signal from the operator kills at once
    if (signals > 1) killAllAgentGroups('SIGKILL')
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  // a closed terminal or dropped ssh session: without a handler node dies at once and the
  // agent (in its own process group, so the terminal's SIGHUP misses it) keeps running
  // with the bead claimed and the pid file left behind
  process.on('SIGHUP', onSignal)
  try {
    const r = await runLoop(deps, {
      ...input.options,
      signal: ac.signal,
      timeoutSec,
      workers,
      land: limits.land,
      stallTimeoutSec: limits.stallTimeoutSec,
      ...(limits.maxTokens !== undefined ? {maxTokens: limits.maxTokens} : {}),
      ...(limits.maxCost !== undefined ? {maxCost: limits.maxCost} : {}),
      maxQuotaWaitSec: limits.maxQuotaWaitSec,
    })
    await fleet?.close()
    // SPEC 19.4: past --max-offline the run stops with every attempt preserved, exit 4
    if (fleet?.offlineExceeded()) return EXIT.AGENT_UNAVAILABLE
    return r.exitCode
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    process.off('SIGHUP', onSignal)
    killAllAgentGroups('SIGKILL')
  }
}
