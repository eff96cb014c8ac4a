/**
 * Shared body of `helix run` and `helix build`: signals → abort, real wiring,
 * runLoop. Kept out of src/commands so the oclif commands stay thin.
 */
import {killAllAgentGroups} from '../agents/runner.js'
import {runLoop} from './orchestrator.js'
import type {LoopOptions} from './ports.js'
import {realLoopDeps, type WiringInput} from './wiring.js'

export interface LoopCliInput extends WiringInput {
  options: Omit<LoopOptions, 'signal' | 'timeoutSec'>
}

/** Runs the loop with SIGINT/SIGTERM handling; returns the exit code. */
export async function runLoopCli(input: LoopCliInput): Promise<number> {
  const ac = new AbortController()
  const {deps, timeoutSec} = realLoopDeps({...input, signal: ac.signal})
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
    const r = await runLoop(deps, {...input.options, signal: ac.signal, timeoutSec})
    return r.exitCode
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    process.off('SIGHUP', onSignal)
    killAllAgentGroups('SIGKILL')
  }
}
