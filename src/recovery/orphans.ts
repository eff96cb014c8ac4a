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
import {claimLiveness, claimPid} from '../tracker/liveness.js'
import {CLAIM_KEYS, releaseClaim} from '../tracker/ops.js'
import {projectTag, taggedProcesses, type TaggedProcess} from '../proc/tagged.js'
import {endProcesses, killGraceMs, pidAlive} from '../proc/process.js'
import {startTokenOf} from '../proc/process-probe.js'

export interface RecoverOptions {
  /** owner name whose claims may be recovered (HELIX_OWNER, default `helix`) */
  owner: string
  probe: ProcessProbe
  now?: Date
  thresholdSec: number
  dryRun?: boolean
  /** receives each progress line (already prefixed with `helix: `) */
  say: (line: string) => void
  /** the live run calling this: its own claims (its beads in flight) are not orphans and are not reported */
  ownPid?: number
  /** end the leftover processes of dead runs first (SPEC 14.5); default true */
  killDeadRuns?: boolean
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

/** true when the helix run `pid` (started at `start`, when recorded) is still running on this host. */
export function runAlive(pid: number, start: string | null): boolean {
  if (!pidAlive(pid)) return false
  if (start === null) return true
  const now = startTokenOf(pid)
  // no /proc to compare with: the pid is all there is
  return now === undefined || now === start
}

/**
 * Processes carrying a dispatch id of `project` (its HELIX_PROJECT, SPEC 18.3a) whose
 * helix run is gone. Runs without a recorded pid, and processes of other projects (or
 * with no project recorded), are left alone.
 */
export function deadRunProcesses(project: string, isRunAlive: (pid: number, start: string | null) => boolean = runAlive): TaggedProcess[] {
  const verdict = new Map<string, boolean>()
  const own = projectTag(project)
  return taggedProcesses((p) => {
    if (p.runPid === null || p.project !== own) return false
    const key = `${p.runPid} ${p.runStart ?? ''}`
    let alive = verdict.get(key)
    if (alive === undefined) verdict.set(key, (alive = isRunAlive(p.runPid, p.runStart)))
    return !alive
  })
}

/**
 * SPEC 14.5: every process still carrying a dispatch id of a helix run that is
 * no longer alive (helix was killed -9 or OOM-killed and its watchdog did not
 * finish) is sent
 * SIGTERM, then SIGKILL after the grace. Runs before any claim is reclaimed,
 * so a reclaimed bead never has a leftover agent still writing to it.
 * Returns the pids that were ended.
 */
export async function killDeadRunProcesses(opts: {project: string; say?: (line: string) => void; dryRun?: boolean; graceMs?: number}): Promise<number[]> {
  const found = deadRunProcesses(opts.project)
  if (found.length === 0) return []
  const runs = [...new Set(found.map((p) => p.runPid))].sort((a, b) => Number(a) - Number(b))
  const what = `${found.length} leftover agent process(es) of dead run(s) ${runs.join(', ')}`
  if (opts.dryRun) {
    opts.say?.(`helix: would kill ${what}`)
    return []
  }
  const ended = new Set<number>()
  // a leftover may fork while it is being ended: scan again (bounded)
  for (let round = 0; round < 3; round++) {
    const pids = round === 0 ? found.map((p) => p.pid) : deadRunProcesses(opts.project).map((p) => p.pid)
    if (pids.length === 0) break
    for (const pid of pids) ended.add(pid)
    await endProcesses({pids}, opts.graceMs ?? killGraceMs())
  }
  opts.say?.(`helix: killed ${what}`)
  return [...ended]
}

export async function recoverOrphans(paths: ProjectPaths, opts: RecoverOptions): Promise<RecoverResult> {
  if (opts.killDeadRuns !== false) await killDeadRunProcesses({project: paths.root, say: opts.say, ...(opts.dryRun ? {dryRun: true} : {})})
  const now = opts.now ?? new Date()
  const owner = opts.owner.trim() || 'helix'
  const snap = await readTracker(paths.file)
  const skipped: RecoverResult['skipped'] = []
  const candidates = new Map<string, {key: string; l: ClaimLiveness}>()
  for (const b of snap.beads) {
    if (statusOf(b) !== 'in_progress' || b.owner !== owner) continue
    if (opts.ownPid !== undefined && claimPid(b) === opts.ownPid && (b['claimed-machine'] === undefined || b['claimed-machine'] === opts.probe.hostname())) continue
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
      releaseClaim(b, now)
      out.push({id, l})
    }
    return {beads: out.length ? locked.beads : null, result: out}
  })
  for (const d of done) opts.say(reclaimLine(d.id, d.l, false))
  if (done.length) opts.say(`helix: recovered ${done.length} orphaned issue(s)`)
  return {recovered: done.map((d) => d.id), skipped}
}
