/** How the loop ends: a Stop value, and StopNow to carry one out of deep code (a dispatch, a gate). */
import type {StopReason} from '../state/types.js'
import {signalExitCode} from '../proc/process.js'

/** A stop decided by the loop: reason, exit code, the line to print (optional). */
export class Stop {
  constructor(
    readonly reason: StopReason,
    readonly exitCode: number,
    readonly message?: string,
    /** kept in run-state `stop_message` (the failure line, the quota reset…) */
    readonly detail?: string,
  ) {}
}

/** Thrown where a stop is decided below the scheduler (agent unavailable, budget, tracker lost). */
export class StopNow extends Error {
  constructor(readonly stop: Stop) {
    super(stop.message ?? stop.reason)
  }
}

export type Step = 'continue' | Stop

/** SIGINT → 130, SIGTERM → 143, SIGHUP → 129 (the terminal or ssh session went away). */
export function interruptStop(signal: AbortSignal | undefined): Stop {
  const reason = String(signal?.reason ?? 'SIGINT')
  const sig = reason === 'SIGTERM' || reason === 'SIGHUP' ? reason : 'SIGINT'
  return new Stop('interrupted', signalExitCode(sig), `helix: interrupted (${sig})`)
}
