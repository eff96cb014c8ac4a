/**
 * What status needs from the tracker, computed from one lock-free snapshot:
 * counts (the `helix tracker status` numbers), the ready list, beads waiting on
 * dependencies and the set of stale claims (SPEC 2.4).
 */
import {hostname} from 'node:os'
import type {Bead, ProcessProbe, TrackerSnapshot} from '../tracker/types.js'
import {pidAlive} from '../state/pidfile.js'
import type {TrackerCounts} from './model.js'
import {readyList, statusOf} from '../loop/selection.js'

export interface TrackerView {
  counts: TrackerCounts
  ready: Bead[]
  waiting: Array<{bead: Bead; waitingOn: string[]}>
  staleClaims: Set<string>
}

export function orphanThreshold(env: NodeJS.ProcessEnv): number {
  const raw = env.HELIX_ORPHAN_THRESHOLD
  const n = raw === undefined || raw.trim() === '' ? NaN : Number(raw)
  return Number.isFinite(n) && n >= 0 ? n : 7200
}

/**
 * Stale claims with the cheap checks first: a claim younger than the threshold
 * (or with no timestamp) is live without looking at any process; only older
 * claims cost a process lookup (the tracker's liveness module, loaded lazily).
 */
export async function staleClaimsOf(snap: TrackerSnapshot, now: Date, env: NodeJS.ProcessEnv): Promise<Set<string>> {
  const threshold = orphanThreshold(env)
  const old: Bead[] = []
  for (const b of snap.beads) {
    if (statusOf(b) !== 'in_progress') continue
    const at = typeof b['claimed-at'] === 'string' ? (b['claimed-at'] as string) : b.updated_at
    const t = typeof at === 'string' ? Date.parse(at) : NaN
    if (Number.isNaN(t)) continue // no evidence: treated as young
    if ((now.getTime() - t) / 1000 < threshold) continue
    old.push(b)
  }
  if (old.length === 0) return new Set()
  const stale = new Set<string>()
  const liveness = await loadLiveness()
  for (const b of old) {
    if (!(await liveness(b, now, threshold))) stale.add(b.id)
  }
  return stale
}

type LiveFn = (b: Bead, now: Date, thresholdSec: number) => Promise<boolean>

/** The tracker helper's claimLiveness + realProbe when present; else the same-host pid check alone. */
async function loadLiveness(): Promise<LiveFn> {
  try {
    const livenessPath = '../tracker/liveness.js'
    const probePath = '../recovery/probe.js'
    const [l, p] = (await Promise.all([import(livenessPath), import(probePath)])) as [
      {claimLiveness: (b: Bead, probe: ProcessProbe, now: Date, t: number) => Promise<{live: boolean}>},
      {realProbe: () => ProcessProbe},
    ]
    const probe = p.realProbe()
    return async (b, now, t) => (await l.claimLiveness(b, probe, now, t)).live
  } catch {
    return async (b) => {
      const machine = b['claimed-machine']
      if (typeof machine === 'string' && machine && machine !== hostname()) return false
      const pid = Number(b['claimed-pid'])
      return pidAlive(pid)
    }
  }
}

export function waitingOnDeps(snap: TrackerSnapshot): Array<{bead: Bead; waitingOn: string[]}> {
  const out: Array<{bead: Bead; waitingOn: string[]}> = []
  for (const b of snap.beads) {
    if (statusOf(b) !== 'open' || !b.dependencies?.length) continue
    const waitingOn: string[] = []
    for (const d of b.dependencies) {
      const id = String(d.depends_on_id)
      const target = snap.byId.get(id)
      if (!target || statusOf(target) !== 'closed') waitingOn.push(target ? id : `${id} (missing)`)
    }
    if (waitingOn.length) out.push({bead: b, waitingOn})
  }
  return out
}

export async function trackerView(snap: TrackerSnapshot, now: Date, env: NodeJS.ProcessEnv): Promise<TrackerView> {
  const staleClaims = await staleClaimsOf(snap, now, env)
  const ready = readyList(snap, staleClaims)
  const counts: TrackerCounts = {total: 0, open: 0, in_progress: 0, closed: 0, blocked: 0, proposed: 0, cancelled: 0, ready: ready.length}
  for (const b of snap.beads) {
    counts.total++
    const s = statusOf(b)
    if (s in counts && s !== 'total' && s !== 'ready') counts[s as keyof TrackerCounts]++
  }
  return {counts, ready, waiting: waitingOnDeps(snap), staleClaims}
}
