/**
 * SIGINT / SIGTERM / SIGHUP for `helix run` and `helix build`, armed at the command's
 * very start (SPEC 5.10, 17): a signal that comes while flags are read, while the review
 * preflight's agent runs or while `--save-config` writes aborts the run's one
 * AbortController, so the run ends the orderly way (agents' groups ended, temp projects
 * removed, exit 130 / 143 / 129), never by the signal itself. Without a handler node dies
 * at once and an agent in its own process group keeps running.
 *
 * A light module (no loop, no wiring): the commands import it before anything else.
 */
import {killAllAgentGroups} from '../proc/groups.js'

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
/** where bin/run.js leaves the signals that came before the command loaded */
const EARLY = Symbol.for('helix.earlySignals')

export interface RunSignals {
  /** aborted with the signal's name ('SIGTERM' …) or another stop reason */
  readonly signal: AbortSignal
  abort(reason: unknown): void
  /** take the handlers off again (the run is over) */
  dispose(): void
}

let armed: RunSignals | null = null

/** Install the handlers once per process; later calls return the same controller. */
export function armRunSignals(): RunSignals {
  if (armed) return armed
  const ac = new AbortController()
  let count = 0
  const onSignal = (sig: NodeJS.Signals) => {
    count++
    if (!ac.signal.aborted) ac.abort(sig)
    // the runner's abort sends SIGTERM to the agent's group and SIGKILL after the grace;
    // a second signal from the operator kills at once
    if (count > 1) killAllAgentGroups('SIGKILL')
  }
  for (const s of SIGNALS) process.on(s, onSignal)
  // bin/run.js kept what came before the command loaded: act on it now
  const early = (globalThis as Record<symbol, unknown>)[EARLY] as {kept: NodeJS.Signals[]; off(): void} | undefined
  if (early) {
    early.off()
    delete (globalThis as Record<symbol, unknown>)[EARLY]
    for (const sig of early.kept) onSignal(sig)
  }
  const self: RunSignals = {
    signal: ac.signal,
    abort: (reason) => {
      if (!ac.signal.aborted) ac.abort(reason)
    },
    dispose: () => {
      for (const s of SIGNALS) process.off(s, onSignal)
      if (armed === self) armed = null
    },
  }
  armed = self
  return self
}
