/**
 * Orphan recovery (SPEC 5.9): unclaim `in_progress` beads owned by helix's owner
 * name whose claim is stale (SPEC 2.4). Candidates are found without the lock,
 * then re-checked under it (compare-and-set on the claim fields) before the
 * unclaim, so a claim renewed in between is left alone.
 */
import type {ProjectPaths} from '../util/root.js'
import type {Bead, ClaimLiveness, ProcessProbe} from '../tracker/types.js'
import {mutateTracker, readTracker} from '../tracker/store.js'
import {statusOf} from '../tracker/queries.js'
import {claimLiveness} from '../tracker/liveness.js'
import {CLAIM_KEYS, isoNow} from '../tracker/ops.js'

export interface RecoverOptions {
  /** owner name whose claims may be recovered (HELIX_OWNER, default `helix`) */
  owner: string
  probe: ProcessProbe
  now?: Date
  thresholdSec: number
  dryRun?: boolean
  /** receives each progress line (already prefixed with `helix: `) */
  say: (line: string) => void
}

export interface RecoverResult {
  recovered: string[]
  skipped: Array<{id: string; why: string}>
}

function claimKey(b: Bead): string {
  return JSON.stringify([b.status, b.owner, ...CLAIM_KEYS.map((k) => b[k])])
}

export function skipReason(l: ClaimLiveness, thresholdSec: number): string {
  switch (l.reason) {
    case 'pid-alive':
      return `claimed by PID ${l.pid} which is still alive, skipping`
    case 'helix-process':
      return 'a running helix process on this host is working on it, skipping'
    default:
      return l.ageSeconds === null
        ? 'claim has no recorded time (claimed-at/updated_at), too fresh to reclaim'
        : `claimed ${l.ageSeconds}s ago (threshold ${thresholdSec}s), too fresh to reclaim`
  }
}

function reclaimLine(id: string, l: ClaimLiveness, dry: boolean): string {
  const verb = dry ? 'would reclaim' : 'reclaiming'
  return `helix: ${verb} orphaned ${id} (age=${l.ageSeconds ?? '?'}s, pid=${l.pid ?? 'unknown'} dead)`
}

export async function recoverOrphans(paths: ProjectPaths, opts: RecoverOptions): Promise<RecoverResult> {
  const now = opts.now ?? new Date()
  const owner = opts.owner.trim() || 'helix'
  const snap = await readTracker(paths.file)
  const skipped: RecoverResult['skipped'] = []
  const candidates = new Map<string, {key: string; l: ClaimLiveness}>()
  for (const b of snap.beads) {
    if (statusOf(b) !== 'in_progress' || b.owner !== owner) continue
    const l = await claimLiveness(b, opts.probe, now, opts.thresholdSec)
    if (l.live) {
      const why = skipReason(l, opts.thresholdSec)
      skipped.push({id: b.id, why})
      opts.say(`helix: ${b.id} ${why}`)
    } else candidates.set(b.id, {key: claimKey(b), l})
  }
  if (candidates.size === 0) return {recovered: [], skipped}
  if (opts.dryRun) {
    for (const [id, c] of candidates) opts.say(reclaimLine(id, c.l, true))
    opts.say(`helix: would recover ${candidates.size} orphaned issue(s)`)
    return {recovered: [...candidates.keys()], skipped}
  }
  const done = await mutateTracker(paths, async (locked) => {
    const out: Array<{id: string; l: ClaimLiveness}> = []
    for (const [id, c] of candidates) {
      const b = locked.byId.get(id)
      if (!b) {
        skipped.push({id, why: 'gone from the tracker, skipping'})
        continue
      }
      let l = c.l
      if (claimKey(b) !== c.key) {
        // The claim changed since we looked: decide again on what is there now.
        if (statusOf(b) !== 'in_progress' || b.owner !== owner) {
          skipped.push({id, why: 'claim changed meanwhile, skipping'})
          continue
        }
        l = await claimLiveness(b, opts.probe, now, opts.thresholdSec)
        if (l.live) {
          skipped.push({id, why: skipReason(l, opts.thresholdSec)})
          continue
        }
      }
      b.status = 'open'
      delete b.owner
      for (const k of CLAIM_KEYS) delete b[k]
      b.updated_at = isoNow(now)
      out.push({id, l})
    }
    return {beads: out.length ? locked.beads : null, result: out}
  })
  for (const d of done) opts.say(reclaimLine(d.id, d.l, false))
  if (done.length) opts.say(`helix: recovered ${done.length} orphaned issue(s)`)
  return {recovered: done.map((d) => d.id), skipped}
}
