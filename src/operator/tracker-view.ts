/**
 * What status needs from the tracker, computed from one lock-free snapshot with
 * the tracker helper's queries: counts (the `helix tracker status` numbers), the
 * ready list, beads waiting on dependencies and stale claims (SPEC 2.4; the
 * liveness check looks at processes only for claims older than the threshold).
 */
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import type {TrackerCounts} from './model.js'
import {blockedBeads, readyBeads, statusCounts} from '../tracker/queries.js'
import {orphanThresholdSec, staleClaimIds} from '../tracker/liveness.js'
import {realProbe} from '../proc/process-probe.js'

export interface TrackerView {
  counts: TrackerCounts
  ready: Bead[]
  waiting: Array<{bead: Bead; waitingOn: string[]}>
  staleClaims: Set<string>
}

export async function trackerView(snap: TrackerSnapshot, now: Date, env: NodeJS.ProcessEnv): Promise<TrackerView> {
  const staleClaims = await staleClaimIds(snap, realProbe(), now, orphanThresholdSec(env))
  const ready = readyBeads(snap, {staleClaims, owner: null}) // SPEC 13.3: status still shows other owners' stale claims
  return {counts: statusCounts(snap, ready.length), ready, waiting: blockedBeads(snap), staleClaims}
}
