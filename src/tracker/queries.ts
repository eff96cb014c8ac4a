/**
 * Read-only tracker semantics (SPEC 2.3). Pure functions over a snapshot.
 */
import type {Bead, TrackerSnapshot} from './types.js'

/** Status with the DDx default: missing → open. */
export function statusOf(b: Bead): string {
  return typeof b.status === 'string' && b.status !== '' ? b.status : 'open'
}

export function priorityOf(b: Bead): number {
  const p = b.priority
  if (typeof p === 'number' && Number.isInteger(p)) return p
  if (typeof p === 'string' && /^\d+$/.test(p)) return Number(p)
  return 2
}

export function queueRankOf(b: Bead): number | undefined {
  const q = b['queue-rank']
  if (typeof q === 'number' && Number.isFinite(q)) return q
  if (typeof q === 'string' && q.trim() !== '' && Number.isFinite(Number(q))) return Number(q)
  return undefined
}

export function issueTypeOf(b: Bead): string {
  return typeof b.issue_type === 'string' && b.issue_type !== '' ? b.issue_type : 'task'
}

export function isEpic(b: Bead): boolean {
  return issueTypeOf(b) === 'epic'
}

/** Ids of the beads `b` depends on (every dependency type blocks). */
export function depIds(b: Bead): string[] {
  const deps = b.dependencies
  if (!Array.isArray(deps)) return []
  const out: string[] = []
  for (const d of deps) {
    if (d && typeof d === 'object' && typeof d.depends_on_id === 'string' && d.depends_on_id !== '') out.push(d.depends_on_id)
  }
  return out
}

/** Dependencies of `b` that are missing or not closed. */
export function openDeps(snap: TrackerSnapshot, b: Bead): string[] {
  const out: string[] = []
  for (const id of depIds(b)) {
    const t = snap.byId.get(id)
    if (!t || statusOf(t) !== 'closed') out.push(id)
  }
  return out
}

export function depsClosed(snap: TrackerSnapshot, b: Bead): boolean {
  return openDeps(snap, b).length === 0
}

function parentIndex(snap: TrackerSnapshot): Map<string, Bead[]> {
  const cached = PARENT_CACHE.get(snap)
  if (cached) return cached
  const m = new Map<string, Bead[]>()
  for (const b of snap.beads) {
    if (typeof b.parent === 'string' && b.parent !== '') {
      const list = m.get(b.parent)
      if (list) list.push(b)
      else m.set(b.parent, [b])
    }
  }
  PARENT_CACHE.set(snap, m)
  return m
}
const PARENT_CACHE = new WeakMap<TrackerSnapshot, Map<string, Bead[]>>()

/** Beads whose `parent` is `id`, file order. (Cached per snapshot: don't mutate parents and re-query the same snapshot.) */
export function childrenOf(snap: TrackerSnapshot, id: string): Bead[] {
  return parentIndex(snap).get(id) ?? []
}

export function hasChildren(snap: TrackerSnapshot, id: string): boolean {
  return childrenOf(snap, id).length > 0
}

function timeKey(s: unknown): number {
  if (typeof s !== 'string' || s === '') return Number.POSITIVE_INFINITY
  const t = Date.parse(s)
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * Ready order: priority ascending; beads with queue-rank before those without,
 * queue-rank ascending; created_at ascending (missing/unparseable last, ties by
 * the raw string, which also orders sub-millisecond DDx timestamps); id ascending.
 */
export function compareReady(a: Bead, b: Bead): number {
  const pa = priorityOf(a)
  const pb = priorityOf(b)
  if (pa !== pb) return pa - pb
  const qa = queueRankOf(a)
  const qb = queueRankOf(b)
  if (qa !== undefined || qb !== undefined) {
    if (qa === undefined) return 1
    if (qb === undefined) return -1
    if (qa !== qb) return qa - qb
  }
  const ta = timeKey(a.created_at)
  const tb = timeKey(b.created_at)
  if (ta !== tb) return ta < tb ? -1 : 1
  const sa = typeof a.created_at === 'string' ? a.created_at : ''
  const sb = typeof b.created_at === 'string' ? b.created_at : ''
  if (sa !== sb) return cmpStr(sa, sb)
  return cmpStr(a.id, b.id)
}

/**
 * What the ready rules read of a tracker (SPEC 2.3): the beads that may be
 * ready (a whole snapshot's beads, or only its open and in_progress ones), the
 * status of any bead by id (a dependency), and whether an id has children (an
 * epic). `tracker ready` builds one straight from the file (ready-read.ts) and
 * keeps nothing else of the other beads.
 */
export interface ReadyInput {
  /** file order; beads of any other status than open and in_progress are skipped */
  readonly beads: readonly Bead[]
  /** statusOf the bead with this id, undefined when there is none */
  statusById(id: string): string | undefined
  /** true when some bead's `parent` is this id */
  hasChildren(id: string): boolean
}

/** A snapshot as ReadyInput. */
export function readyInputOf(snap: TrackerSnapshot): ReadyInput {
  return {
    beads: snap.beads,
    statusById(id) {
      const t = snap.byId.get(id)
      return t === undefined ? undefined : statusOf(t)
    },
    hasChildren: (id) => hasChildren(snap, id),
  }
}

/** True when the bead passes every ready rule except the status rule. */
function eligible(input: ReadyInput, b: Bead): boolean {
  const sup = b['superseded-by']
  if (typeof sup === 'string' && sup.trim() !== '') return false
  if (b['execution-eligible'] === false) return false
  if (isEpic(b) && input.hasChildren(b.id)) return false
  if (labelledBlocked(b)) return false
  // every dependency closed (a missing one is not)
  for (const id of depIds(b)) if (input.statusById(id) !== 'closed') return false
  return true
}

/** The owner this process claims as: HELIX_OWNER, else `helix` (SPEC 2.3, 13.3). */
export function helixOwner(env: NodeJS.ProcessEnv = process.env): string {
  return env.HELIX_OWNER?.trim() || 'helix'
}

/**
 * May `owner` take over this stale claim? Only its own claims, or ones with no
 * owner recorded (older tools): a bead of another owner is never taken (13.3).
 */
export function ownClaim(b: Bead, owner: string): boolean {
  return typeof b.owner !== 'string' || b.owner.trim() === '' || b.owner === owner
}

/** SPEC 16.2: a bead labelled `blocked` is parked everywhere (ready, next, run) until the label goes. */
export function labelledBlocked(b: Bead): boolean {
  return Array.isArray(b.labels) && b.labels.includes('blocked')
}

/** The reason from the bead's last `BLOCKED [time]: reason` note, or null. */
export function blockedNoteReason(b: Bead): string | null {
  const notes = typeof b.notes === 'string' ? b.notes : ''
  let reason: string | null = null
  for (const line of notes.split('\n')) {
    const m = /^BLOCKED(?: \[[^\]]*\])?:\s*([^\n]*)$/.exec(line)
    if (m) reason = m[1]
  }
  return reason
}

/**
 * SPEC 2.3 ready set, sorted. `in_progress` beads count only when their id is in
 * `staleClaims` (claims found stale by liveness.staleClaimIds) AND the claim is
 * `owner`'s (SPEC 13.3: another owner's stale claim is never taken by `helix run`
 * nor listed by `helix next`). `owner` defaults to HELIX_OWNER / `helix`; pass
 * null to list every stale claim (`tracker ready` shows them as "claimed by … (stale)").
 */
export function readyBeads(snap: TrackerSnapshot, opts: {staleClaims?: Set<string>; owner?: string | null} = {}): Bead[] {
  return readyFrom(readyInputOf(snap), opts)
}

/** readyBeads over a ReadyInput. */
export function readyFrom(input: ReadyInput, opts: {staleClaims?: Set<string>; owner?: string | null} = {}): Bead[] {
  const stale = opts.staleClaims
  const owner = opts.owner === undefined ? helixOwner() : opts.owner
  const out: Bead[] = []
  for (const b of input.beads) {
    const s = statusOf(b)
    if (s === 'open' || (s === 'in_progress' && stale?.has(b.id) && (owner === null || ownClaim(b, owner)))) {
      if (eligible(input, b)) out.push(b)
    }
  }
  // Precompute sort keys once: 100k beads sort in a few ms.
  const keyed = out.map((b) => ({b, p: priorityOf(b), q: queueRankOf(b), t: timeKey(b.created_at)}))
  keyed.sort((x, y) => {
    if (x.p !== y.p) return x.p - y.p
    if (x.q !== undefined || y.q !== undefined) {
      if (x.q === undefined) return 1
      if (y.q === undefined) return -1
      if (x.q !== y.q) return x.q - y.q
    }
    if (x.t !== y.t) return x.t < y.t ? -1 : 1
    return compareReady(x.b, y.b)
  })
  return keyed.map((k) => k.b)
}

/**
 * SPEC 16.2 blocked set, file order: status `blocked`, labelled `blocked` (not
 * closed/cancelled; `reason` from its last BLOCKED note), and open beads waiting
 * on an unclosed or missing dependency.
 */
export function blockedBeads(snap: TrackerSnapshot): Array<{bead: Bead; waitingOn: string[]; reason?: string | null}> {
  const out: Array<{bead: Bead; waitingOn: string[]; reason?: string | null}> = []
  for (const b of snap.beads) {
    const s = statusOf(b)
    // status first: a done bead's labels are never read (the query cache keeps only id, status and parent of those)
    if (s !== 'closed' && s !== 'cancelled' && labelledBlocked(b)) out.push({bead: b, waitingOn: openDeps(snap, b), reason: blockedNoteReason(b)})
    else if (s === 'blocked') out.push({bead: b, waitingOn: openDeps(snap, b)})
    else if (s === 'open') {
      const w = openDeps(snap, b)
      if (w.length > 0) out.push({bead: b, waitingOn: w})
    }
  }
  return out
}

export interface StatusCounts {
  total: number
  open: number
  in_progress: number
  closed: number
  /** what `helix tracker blocked` lists: status `blocked` + labelled `blocked` + open beads waiting on deps */
  blocked: number
  proposed: number
  cancelled: number
  ready: number
}

/** SPEC 2.5 status counts. Statuses other than the six count only toward `total`. */
export function statusCounts(snap: TrackerSnapshot, readyCount: number): StatusCounts {
  const c: StatusCounts = {total: snap.beads.length, open: 0, in_progress: 0, closed: 0, blocked: 0, proposed: 0, cancelled: 0, ready: readyCount}
  for (const b of snap.beads) {
    const s = statusOf(b)
    switch (s) {
      case 'open':
        c.open++
        break
      case 'in_progress':
        c.in_progress++
        break
      case 'closed':
        c.closed++
        break
      case 'proposed':
        c.proposed++
        break
      case 'cancelled':
        c.cancelled++
        break
      default:
        break
    }
  }
  c.blocked = blockedBeads(snap).length
  return c
}
