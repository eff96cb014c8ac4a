/**
 * An attempt's tracker edits, carried onto the fresh base (SPEC 19.2 steps 3–5).
 * The agent edits the worktree's own `.ddx/beads.jsonl`; at landing helix takes
 * what changed there since the attempt's base (`before` → `after`) and applies it
 * bead by bead, field by field, to the tracker at the fresh remote tip, so two
 * hosts that changed different beads (or different fields) never conflict. The
 * claim fields helix wrote into the copy are never carried: a landed line has none.
 */
import {CLAIM_KEYS} from '../tracker/ops.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)
const CLAIM = new Set<string>([...CLAIM_KEYS, 'owner'])

function mergeNotes(base: unknown, after: unknown, tip: unknown): unknown {
  const b = typeof base === 'string' ? base : ''
  const a = typeof after === 'string' ? after : ''
  const t = typeof tip === 'string' ? tip : ''
  if (a.startsWith(b)) {
    const added = a.slice(b.length).replace(/^\s+/, '')
    if (added === '' || t.includes(added)) return tip
    return t.trim() === '' ? added : `${t.replace(/\s+$/, '')}\n\n${added}`
  }
  return after
}

function mergeLabels(base: unknown, after: unknown, tip: unknown): string[] {
  const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : [])
  const b = new Set(list(base))
  const a = new Set(list(after))
  const out = list(tip).filter((l) => !(b.has(l) && !a.has(l)))
  for (const l of a) if (!b.has(l) && !out.includes(l)) out.push(l)
  return out
}

/** the note a bead gets when an attempt on another bead closed it (session 35, src/loop/foreign-closes.ts) */
export function notClosedNote(own: string): string {
  return `NOT CLOSED: the agent working on ${own} closed this bead, which was not its own; helix did not carry that close to the base (a close needs its own attempt). Close it by hand if its work is done.`
}

/**
 * Applies the edits `before` → `after` to `tip` in place (its beads keep their
 * order; new beads are appended). Returns the ids it changed. With `own` (the
 * attempt's bead), a close of another bead that was open at the attempt's base and
 * is not an epic is not carried (its other edits are): that bead gets
 * `notClosedNote` instead, which travels to the base and says it.
 */
export function applyAttemptEdits(before: TrackerSnapshot, after: TrackerSnapshot, tip: TrackerSnapshot, own?: {bead: string}): string[] {
  const changed: string[] = []
  for (const a of after.beads) {
    const b = before.byId.get(a.id)
    const t = tip.byId.get(a.id)
    const foreignClose = own !== undefined && b !== undefined && t !== undefined && a.id !== own.bead && a.status === 'closed' && b.status === 'open' && t.status !== 'closed' && b.issue_type !== 'epic'
    if (!b) {
      if (t) continue
      const fresh: Bead = {...a}
      for (const k of CLAIM) if (k !== 'owner') delete fresh[k]
      tip.beads.push(fresh)
      tip.byId.set(fresh.id, fresh)
      changed.push(a.id)
      continue
    }
    if (!t) continue
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    let touched = false
    for (const k of keys) {
      if (CLAIM.has(k) || same(a[k], b[k])) continue
      if (foreignClose && (k === 'status' || k === 'closed_at' || k === 'close_reason')) continue
      let v: unknown
      if (k === 'status' && a[k] === 'in_progress') continue
      else if (k === 'notes') v = mergeNotes(b[k], a[k], t[k])
      else if (k === 'labels') v = mergeLabels(b[k], a[k], t[k])
      else v = a[k]
      if (same(v, t[k])) continue
      if (v === undefined) delete t[k]
      else t[k] = v
      touched = true
    }
    if (foreignClose) {
      const note = notClosedNote((own as {bead: string}).bead)
      const tn = typeof t.notes === 'string' ? t.notes : ''
      if (!tn.includes(note)) ((t.notes = tn.trim() === '' ? note : `${tn.replace(/\s+$/, '')}\n\n${note}`), (touched = true))
    }
    for (const k of CLAIM_KEYS) if (k in t) ((touched = true), delete t[k])
    if (t.status === 'in_progress' && a.status !== 'in_progress') touched = true
    if (touched) changed.push(a.id)
  }
  return changed
}
