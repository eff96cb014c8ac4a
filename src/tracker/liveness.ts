/**
 * Claim liveness (SPEC 2.4, 13.3). Cheap checks first: age (no process lookup), then
 * the recorded pid and start token, and only then a process-table scan.
 *
 * Provably dead (13.3): a claim of THIS host with a recorded start token whose
 * pid is gone (or runs with another start token), and with no process on this
 * host carrying a dispatch id of the claim (`HELIX_DISPATCH_ID` =
 * `<claim-token>.<n>`), is stale at once, whatever its age. The ps-list clause
 * (a helix process naming the bead) still keeps it live.
 */
import type {Bead, ClaimLiveness, ProcessProbe} from './types.js'
import {statusOf} from './queries.js'
import {processesOfDispatch, taggedProcesses} from '../proc/tagged.js'

/** A timestamp more than this far in the future is no evidence (clock skew, hand edits). */
export const FUTURE_SKEW_MS = 5 * 60_000

export const DEFAULT_ORPHAN_THRESHOLD_SEC = 7200

export function orphanThresholdSec(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HELIX_ORPHAN_THRESHOLD
  if (raw === undefined || raw.trim() === '') return DEFAULT_ORPHAN_THRESHOLD_SEC
  const n = Number(raw)
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_ORPHAN_THRESHOLD_SEC
}

/** The claim pid as a positive integer (real files store it as a string), else null. */
export function claimPid(b: Bead): number | null {
  const v = b['claimed-pid']
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : Number.NaN
  return Number.isInteger(n) && n > 0 ? n : null
}

/**
 * Seconds since the claim (claimed-at, else updated_at); null when neither
 * parses. A value more than 5 minutes in the future is no evidence of age and
 * is skipped (SPEC 13.3).
 */
export function claimAgeSec(b: Bead, now: Date): number | null {
  for (const k of ['claimed-at', 'updated_at']) {
    const v = b[k]
    if (typeof v === 'string' && v !== '') {
      const t = Date.parse(v)
      if (Number.isNaN(t) || t - now.getTime() > FUTURE_SKEW_MS) continue
      return Math.max(0, Math.floor((now.getTime() - t) / 1000))
    }
  }
  return null
}

function tokenString(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined
}

/** true when some process on this host carries a dispatch id of this claim token. */
function dispatchAlive(probe: ProcessProbe, token: string): boolean {
  if (probe.dispatchAlive) return probe.dispatchAlive(token)
  return processesOfDispatch(token, {prefix: true}).length > 0
}

/**
 * SPEC 13.3: the claimer is provably dead (this host, start token recorded,
 * the pid gone or reused, no process of the claim's dispatches alive).
 * The caller still applies the ps-list clause.
 */
export function claimerProvablyDead(bead: Bead, probe: ProcessProbe): boolean {
  const machine = bead['claimed-machine']
  if (typeof machine !== 'string' || machine === '' || machine !== probe.hostname()) return false
  const recorded = tokenString(bead['claimed-start'])
  if (recorded === undefined) return false
  const pid = claimPid(bead)
  if (pid !== null && probe.isRunning(pid)) {
    const current = probe.startToken(pid)
    if (current === undefined || current === recorded) return false
  }
  const token = tokenString(bead['claim-token'])
  if (token !== undefined && dispatchAlive(probe, token)) return false
  return true
}

export async function claimLiveness(bead: Bead, probe: ProcessProbe, now: Date, thresholdSec: number): Promise<ClaimLiveness> {
  const age = claimAgeSec(bead, now)
  const pid = claimPid(bead)
  if (claimerProvablyDead(bead, probe)) {
    if (await probe.helixProcessNamesBead(bead.id)) return {live: true, reason: 'helix-process', ageSeconds: age, pid}
    return {live: false, reason: 'stale', ageSeconds: age, pid}
  }
  // No evidence of age: treat as young, never reclaim on missing evidence.
  if (age === null || age < thresholdSec) return {live: true, reason: 'fresh', ageSeconds: age, pid}
  const machine = bead['claimed-machine']
  const sameHost = typeof machine !== 'string' || machine === '' || machine === probe.hostname()
  if (!sameHost) return {live: false, reason: 'stale', ageSeconds: age, pid}
  if (pid !== null && probe.isRunning(pid)) {
    const recorded = bead['claimed-start']
    const current = probe.startToken(pid)
    const recordedTok = typeof recorded === 'string' && recorded !== '' ? recorded : typeof recorded === 'number' ? String(recorded) : undefined
    if (recordedTok === undefined || current === undefined || recordedTok === current) {
      return {live: true, reason: 'pid-alive', ageSeconds: age, pid}
    }
    // same pid number, different process: the pid was reused
  }
  if (await probe.helixProcessNamesBead(bead.id)) return {live: true, reason: 'helix-process', ageSeconds: age, pid}
  return {live: false, reason: 'stale', ageSeconds: age, pid}
}

/**
 * An in_progress bead's claim may be stale: it is old (or undated claims aside) or its
 * claimer is provably dead. False means `claimLiveness` would call it live without
 * looking further, so `staleClaimIds` and `tracker ready`'s read skip it alike.
 */
export function claimMayBeStale(b: Bead, probe: ProcessProbe, now: Date, thresholdSec: number): boolean {
  const age = claimAgeSec(b, now)
  return !((age === null || age < thresholdSec) && !claimerProvablyDead(b, probe))
}

/** A probe whose dispatch lookups share one /proc scan (taken on first use) across many beads. */
export function withOneDispatchScan(probe: ProcessProbe): ProcessProbe {
  if (probe.dispatchAlive) return probe
  let ids: string[] | null = null
  return {
    ...probe,
    dispatchAlive(token: string): boolean {
      ids ??= taggedProcesses().map((p) => p.dispatchId)
      return ids.some((id) => id === token || id.startsWith(`${token}.`))
    },
  }
}

/** Ids of `in_progress` beads whose claim is stale. */
export async function staleClaimIds(snap: {readonly beads: readonly Bead[]}, probeIn: ProcessProbe, now: Date, thresholdSec: number): Promise<Set<string>> {
  const probe = withOneDispatchScan(probeIn)
  const out = new Set<string>()
  for (const b of snap.beads) {
    if (statusOf(b) !== 'in_progress') continue
    // fresh (or undated) claims are live unless their claimer is provably dead:
    // decide without an await per bead
    if (!claimMayBeStale(b, probe, now, thresholdSec)) continue
    const l = await claimLiveness(b, probe, now, thresholdSec)
    if (!l.live) out.add(b.id)
  }
  return out
}
