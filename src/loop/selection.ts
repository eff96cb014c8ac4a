/**
 * Target selection (SPEC 2.3 readiness, 5.3 tiers, 5.4 epic focus and batching).
 * Pure: takes a tracker snapshot and the run's bookkeeping, returns what to work on.
 * `helix next` (ops) calls `nextSelectable`; the run loop calls `selectTarget`.
 */
import type {Bead, TrackerSnapshot} from '../tracker/types.js'

import {childrenOf, compareReady, isEpic, readyBeads, statusOf} from '../tracker/queries.js'

export {childrenOf, compareReady, statusOf}

export function isEpicBead(b: Bead): boolean {
  return isEpic(b)
}

function nonBlank(v: unknown): boolean {
  if (v === undefined || v === null) return false
  if (typeof v === 'string') return v.trim() !== ''
  return true
}

/** SPEC 2.3 ready list, sorted (the tracker's own `readyBeads`, so `helix tracker ready`, `next` and `run` agree). */
export function readyList(snap: TrackerSnapshot, staleClaims: ReadonlySet<string> = new Set()): Bead[] {
  return readyBeads(snap, {staleClaims: staleClaims as Set<string>})
}

export function hasLabel(b: Bead, label: string): boolean {
  return Array.isArray(b.labels) && b.labels.includes(label)
}

/** SPEC 5.3 tier of a bead: 1 governed non-epic, 2 other non-epic, 3 epic. */
export function tierOf(b: Bead): 1 | 2 | 3 {
  if (isEpicBead(b)) return 3
  if (nonBlank(b['spec-id']) || nonBlank(b.acceptance) || nonBlank(b.design)) return 1
  return 2
}

function pickByTier(beads: Bead[]): {bead: Bead; tier: 1 | 2 | 3} | null {
  let best: {bead: Bead; tier: 1 | 2 | 3} | null = null
  for (const b of beads) {
    const t = tierOf(b)
    if (!best || t < best.tier) best = {bead: b, tier: t}
    if (t === 1) break
  }
  return best
}

export interface SelectOptions {
  /** this run's skip list (blocked, drifted) */
  skip?: ReadonlySet<string>
  /** bead id → ISO time before which it is not attempted again */
  backoffUntil?: Readonly<Record<string, string>>
  now?: Date
  /** in_progress beads whose claim is stale (SPEC 2.4): they count as ready */
  staleClaims?: ReadonlySet<string>
  /** the run's focused epic: only its ready children are candidates */
  focusedEpic?: string | null
  /** ids left out for this iteration only (claim conflicts) */
  exclude?: ReadonlySet<string>
}

export interface Selection {
  target: Bead | null
  tier: 1 | 2 | 3 | null
  /** epic the run should focus on (target's parent epic), when any */
  epicFocus?: string
  /** up to 2 ready siblings joining the prompt (BATCH MODE) */
  batch: Bead[]
  /** the ready list minus the skip list (what `ready=R` counts) */
  ready: Bead[]
  /** ready beads currently held back by backoff, earliest first */
  waiting: Array<{id: string; until: string}>
}

/** Ready, minus `blocked` label, skip list, exclusions and backoff. */
export function selectableBeads(snap: TrackerSnapshot, opts: SelectOptions = {}): {ready: Bead[]; selectable: Bead[]; waiting: Array<{id: string; until: string}>} {
  const now = (opts.now ?? new Date()).getTime()
  const skip = opts.skip ?? new Set<string>()
  const ready = readyList(snap, opts.staleClaims).filter((b) => !skip.has(b.id))
  const selectable: Bead[] = []
  const waiting: Array<{id: string; until: string}> = []
  for (const b of ready) {
    if (hasLabel(b, 'blocked')) continue
    if (opts.exclude?.has(b.id)) continue
    const until = opts.backoffUntil?.[b.id]
    if (until && Date.parse(until) > now) {
      waiting.push({id: b.id, until})
      continue
    }
    selectable.push(b)
  }
  waiting.sort((a, b) => Date.parse(a.until) - Date.parse(b.until))
  return {ready, selectable, waiting}
}

function epicParentOf(snap: TrackerSnapshot, b: Bead): string | undefined {
  if (typeof b.parent !== 'string' || b.parent === '') return undefined
  const p = snap.byId.get(b.parent)
  return p && isEpicBead(p) ? p.id : undefined
}

function areaLabels(b: Bead): string[] {
  return (b.labels ?? []).filter((l) => typeof l === 'string' && l.startsWith('area:'))
}

/** Up to `max` selectable non-epic siblings sharing parent, spec-id or an area:* label. */
export function batchFor(target: Bead, selectable: Bead[], max = 2): Bead[] {
  if (isEpicBead(target)) return []
  const areas = new Set(areaLabels(target))
  const spec = nonBlank(target['spec-id']) ? String(target['spec-id']) : null
  const parent = nonBlank(target.parent) ? target.parent : null
  const out: Bead[] = []
  for (const b of selectable) {
    if (out.length >= max) break
    if (b.id === target.id || isEpicBead(b)) continue
    const shares =
      (parent !== null && b.parent === parent) ||
      (spec !== null && b['spec-id'] === spec) ||
      areaLabels(b).some((l) => areas.has(l))
    if (shares) out.push(b)
  }
  return out
}

/**
 * SPEC 5.3/5.4: the next target. With a focused epic only its selectable children
 * are candidates (target null when none: the caller releases focus or closes it).
 */
export function selectTarget(snap: TrackerSnapshot, opts: SelectOptions = {}): Selection {
  const {ready, selectable, waiting} = selectableBeads(snap, opts)
  const focus = opts.focusedEpic ?? null
  const pool = focus ? selectable.filter((b) => b.parent === focus) : selectable
  const pick = pickByTier(pool)
  if (!pick) return {target: null, tier: null, batch: [], ready, waiting}
  const epicFocus = focus ?? epicParentOf(snap, pick.bead)
  const batch = batchFor(pick.bead, selectable)
  return {target: pick.bead, tier: pick.tier, ...(epicFocus ? {epicFocus} : {}), batch, ready, waiting}
}

/**
 * What `helix next` prints: the bead `helix run` would select now, or null. Mirrors
 * the loop: children of skipped (blocked) epics are skipped too, and a focused epic
 * with no selectable child releases focus (normal selection).
 */
export function nextSelectable(snap: TrackerSnapshot, opts: SelectOptions = {}): Bead | null {
  const skip = new Set(opts.skip ?? [])
  if (skip.size > 0) for (const b of snap.beads) if (typeof b.parent === 'string' && skip.has(b.parent)) skip.add(b.id)
  const o = {...opts, skip}
  if (opts.focusedEpic) {
    const t = selectTarget(snap, o).target
    if (t) return t
  }
  return selectTarget(snap, {...o, focusedEpic: null}).target
}
