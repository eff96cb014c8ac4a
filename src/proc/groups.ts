/**
 * The registry of live agent process groups: which groups helix started and
 * which other processes belong to their dispatch (escapees, the dispatch id).
 * The runner registers a group when it spawns an agent and forgets it when the
 * dispatch has ended; helix's signal handler and its exit hook end them all, so
 * no agent process outlives helix.
 */
import {escapedDescendants, signalGroup, signalTarget} from './process.js'

export interface LiveDispatch {

  /** descendants that escaped the group (setsid / setpgid), known once a kill began */
  escapees: Set<number>
  /** the HELIX_DISPATCH_ID every process of the dispatch carries (SPEC 14.5) */
  dispatchId: string
}

/** live agent process groups → what else belongs to their dispatch */
const liveGroups = new Map<number, LiveDispatch>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // Last line of defence: whatever way helix exits, its agents go with it.
  process.on('exit', () => killAllAgentGroups('SIGKILL'))
}

/** Process-group ids of the agents running now. */
export function liveAgentGroups(): number[] {
  return [...liveGroups.keys()]
}

/** HELIX_DISPATCH_IDs of the dispatches running now. */
export function liveDispatchIds(): string[] {
  return [...liveGroups.values()].map((d) => d.dispatchId)
}

/**
 * Send `signal` to every live agent process group, to every descendant that
 * escaped it, and to every process carrying the dispatch id of an in-flight
 * dispatch (helix's own SIGINT/SIGTERM handler calls this; the pending
 * dispatches then resolve). Returns how many groups were signalled.
 */
export function killAllAgentGroups(signal: NodeJS.Signals = 'SIGTERM'): number {
  let n = 0
  for (const [pgid, d] of liveGroups) for (const pid of escapedDescendants(pgid, pgid)) d.escapees.add(pid)
  for (const [pgid, d] of liveGroups) {
    if (signalGroup(pgid, signal)) n++
    signalTarget({dispatchId: d.dispatchId, pids: d.escapees}, signal)
  }
  return n
}

/** Remember a spawned agent's group until its dispatch ends (installs the exit hook once). */
export function registerGroup(pgid: number, d: LiveDispatch): void {
  liveGroups.set(pgid, d)
  installExitHook()
}

/** The dispatch of `pgid` has ended. */
export function forgetGroup(pgid: number): void {
  liveGroups.delete(pgid)
}
