/**
 * How the loop ends. A stop is a value, and it travels one way: returned (as a `Step`
 * or from `dispatch`), never thrown. Its exit code is derived from its cause by one
 * exhaustive mapping (SPEC 17), so a reason can't be paired with the wrong code.
 */
import type {StopReason} from '../state/types.js'
import {EXIT} from '../util/errors.js'
import {signalExitCode} from '../proc/process.js'

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP'

/** why the run stops; the variants that need more than a name to give their exit code carry it */
export type StopCause =
  | {reason: 'completed'}
  | {reason: 'max_cycles'}
  | {reason: 'budget'}
  | {reason: 'blocked'}
  | {reason: 'agent_unavailable'}
  | {reason: 'quota'}
  | {reason: 'interrupted'; signal: StopSignal}
  /** bad input or a failed step (1), a claim conflict (3), or a user error's own code; `bug`: an unexpected exception */
  | {reason: 'error'; exit?: number; bug?: boolean}

type PlainReason = Exclude<StopReason, 'interrupted' | 'error'> | 'error'

/** SPEC 10, 17: the exit code of a stop, from its cause alone */
export function stopExitCode(c: StopCause): number {
  switch (c.reason) {
    case 'completed':
    case 'max_cycles':
    case 'budget':
    case 'blocked':
      return EXIT.OK
    case 'agent_unavailable':
    case 'quota':
      return EXIT.AGENT_UNAVAILABLE
    case 'interrupted':
      return signalExitCode(c.signal)
    case 'error':
      return c.exit ?? EXIT.ERROR
    default: {
      const never: never = c
      throw new Error(`unhandled stop cause ${JSON.stringify(never)}`)
    }
  }
}

/** A stop decided by the loop: its cause, the line to print (optional), the run-state `stop_message`. */
export class Stop {
  readonly cause: StopCause

  constructor(
    cause: StopCause | PlainReason,
    readonly message?: string,
    /** kept in run-state `stop_message` (the failure line, the quota reset…) */
    readonly detail?: string,
  ) {
    this.cause = typeof cause === 'string' ? ({reason: cause} as StopCause) : cause
  }

  get reason(): StopReason {
    return this.cause.reason
  }

  get exitCode(): number {
    return stopExitCode(this.cause)
  }

  /** the same stop with another reason (a completed run with blockers ends as `blocked`) */
  as(cause: StopCause): Stop {
    return new Stop(cause, this.message, this.detail)
  }
}

export type Step = 'continue' | Stop

/** SIGINT → 130, SIGTERM → 143, SIGHUP → 129 (the terminal or ssh session went away). */
/**
 * The reason of an abort that is not an operator's signal: a `--remote` run whose remote
 * was unreachable past `--max-offline` (SPEC 19.4). It stops like a signal (every attempt
 * preserved), but as `agent_unavailable`, exit 4: the run could not go on, nobody asked it to stop.
 */
export class OfflineAbort {
  constructor(readonly message: string) {}
}

export function interruptStop(signal: AbortSignal | undefined): Stop {
  if (signal?.reason instanceof OfflineAbort) return new Stop('agent_unavailable', undefined, signal.reason.message)
  const reason = String(signal?.reason ?? 'SIGINT')
  const sig: StopSignal = reason === 'SIGTERM' || reason === 'SIGHUP' ? reason : 'SIGINT'
  return new Stop({reason: 'interrupted', signal: sig}, `helix: interrupted (${sig})`)
}
