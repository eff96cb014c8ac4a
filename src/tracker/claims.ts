/**
 * Claims (SPEC 2.4, 13.3; split out of ops.ts): claim (compare-and-set),
 * unclaim, release, the claim keys, and the claim-token fence every agent
 * write passes through.
 */
import {randomBytes} from 'node:crypto'
import os from 'node:os'
import {ClaimConflictError} from '../util/errors.js'
import type {ProjectPaths} from '../util/root.js'
import type {Bead, ProcessProbe, TrackerSnapshot} from './types.js'
import {mutateTracker} from './store.js'
import {openDeps, ownClaim, statusOf} from './queries.js'
import {claimLiveness, claimPid} from './liveness.js'
import {getBead, isoNow} from './bead-edit.js'

/** Keys that make up a claim (removed by unclaim/close/reopen; `owner` handled separately). */
export const CLAIM_KEYS = ['claimed-at', 'claimed-pid', 'claimed-machine', 'claimed-start', 'claim-token'] as const

// ------------------------------------------------------------------ claim

export interface ClaimOptions {
  owner?: string
  pid?: number
  machine?: string
  startToken?: string
  probe: ProcessProbe
  thresholdSec: number
  now?: Date
}

function describeClaim(b: Bead): string {
  const owner = typeof b.owner === 'string' && b.owner !== '' ? b.owner : 'unknown'
  const pid = claimPid(b)
  return `already claimed by ${owner} (pid ${pid ?? 'unknown'})`
}

/** Compare-and-set claim on a bead of a locked snapshot (mutates `b`). */
export async function applyClaim(snap: TrackerSnapshot, b: Bead, opts: ClaimOptions, now: Date): Promise<void> {
  const s = statusOf(b)
  if (s === 'in_progress') {
    // another owner's claim is never taken over, stale or not (SPEC 13.3): unclaim it first
    if (!ownClaim(b, opts.owner?.trim() || 'helix')) throw new ClaimConflictError(`cannot claim ${b.id}: ${describeClaim(b)}`)
    const l = await claimLiveness(b, opts.probe, now, opts.thresholdSec)
    if (l.live) throw new ClaimConflictError(`cannot claim ${b.id}: ${describeClaim(b)}`)
  } else if (s !== 'open') {
    throw new ClaimConflictError(`cannot claim ${b.id}: ${s}`)
  }
  const waiting = openDeps(snap, b)
  if (waiting.length) throw new ClaimConflictError(`cannot claim ${b.id}: waiting on dependencies ${waiting.join(', ')}`)
  b.status = 'in_progress'
  b.owner = opts.owner?.trim() || 'helix'
  b['claimed-at'] = isoNow(now)
  b['claimed-pid'] = opts.pid ?? process.pid
  b['claimed-machine'] = opts.machine ?? os.hostname()
  if (opts.startToken !== undefined) b['claimed-start'] = opts.startToken
  else delete b['claimed-start']
  b['claim-token'] = randomBytes(8).toString('hex')
}

export function dropClaim(b: Bead, owner: boolean): void {
  for (const k of CLAIM_KEYS) delete b[k]
  if (owner) delete b.owner
}

/**
 * Give a claimed bead back to the queue inside a mutation (mutates `b`): open,
 * no owner, no claim keys, `updated_at` now. Orphan recovery and `helix stop`
 * release claims this one way (`unclaimBead` shares `dropClaim`).
 */
export function releaseClaim(b: Bead, now?: Date): void {
  b.status = 'open'
  dropClaim(b, true)
  b.updated_at = isoNow(now)
}

export async function claimBead(paths: ProjectPaths, id: string, opts: ClaimOptions): Promise<Bead> {
  const now = opts.now ?? new Date()
  return mutateTracker(paths, async (snap) => {
    const b = getBead(snap, id)
    await applyClaim(snap, b, opts, now)
    b.updated_at = isoNow(now)
    return {beads: snap.beads, result: b}
  })
}

export interface UnclaimResult {
  bead: Bead
  /** true when the bead was closed and left alone */
  closed: boolean
  changed: boolean
}

export async function unclaimBead(paths: ProjectPaths, id: string, opts: {now?: Date} = {}): Promise<UnclaimResult> {
  return mutateTracker<UnclaimResult>(paths, (snap) => {
    const b = getBead(snap, id)
    const s = statusOf(b)
    if (s === 'closed') return {beads: null, result: {bead: b, closed: true, changed: false}}
    const hadClaim = CLAIM_KEYS.some((k) => k in b) || (s === 'in_progress' && 'owner' in b)
    if (s !== 'in_progress' && !hadClaim) return {beads: null, result: {bead: b, closed: false, changed: false}}
    if (s === 'in_progress') b.status = 'open'
    dropClaim(b, true)
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: {bead: b, closed: false, changed: true}}
  })
}

/** The message the command prints when unclaim meets a closed bead. */
export function closedUnclaimMessage(id: string): string {
  return `${id} is closed; leaving it closed`
}

// ------------------------------------------------------------------ fence

/** The caller's claim (HELIX_CLAIM_TOKEN / HELIX_BEAD_ID from the agent's environment). */
export interface Fence {
  claimToken?: string
  targetId?: string
}

/** The fence of an agent's process environment. */
export function fenceFromEnv(env: NodeJS.ProcessEnv = process.env): Fence {
  return {claimToken: env.HELIX_CLAIM_TOKEN, targetId: env.HELIX_BEAD_ID}
}

export function claimLostMessage(id: string): string {
  return `claim on ${id} was lost (token mismatch); not changing it`
}

/**
 * SPEC 13.3 fence, for every write an agent can make to a bead: with a claim
 * token set, refuse (exit 3) when the bead carries a different `claim-token`,
 * or when it is the agent's own bead (HELIX_BEAD_ID) and its claim was
 * released (no `claim-token`). Other beads are not fenced.
 */
export function checkFence(b: Bead, f: Fence | undefined): void {
  const token = f?.claimToken
  if (token === undefined || token === '') return
  const raw = b['claim-token']
  const has = typeof raw === 'string' && raw !== '' ? raw : typeof raw === 'number' ? String(raw) : undefined
  const lost = has !== undefined ? has !== token : f?.targetId !== undefined && f.targetId !== '' && f.targetId === b.id
  if (lost) throw new ClaimConflictError(claimLostMessage(b.id))
}
