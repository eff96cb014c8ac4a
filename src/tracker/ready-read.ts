/**
 * The one read of `tracker ready` (SPEC 2.3): every line is parsed and checked
 * exactly as the strict parse does (same malformed-line error, duplicates: the
 * last line wins), but only an open or in_progress bead is kept whole. Of every
 * other bead the ready rules read only its status (as a dependency) and its
 * parent (an epic with children is not ready), so those two are all that is kept.
 * On a 100k-bead tracker most beads are done: keeping them whole cost as much
 * garbage collection as parsing them (docs/performance.md). Nothing is stored
 * between runs.
 */
import type {Bead} from './types.js'
import {malformedError, parseLine} from './lines.js'
import {statusOf, type ReadyInput} from './queries.js'
import {eachTrackerText} from './chunked-lines.js'

/**
 * The ReadyInput of the tracker at `file` (none: no beads), read in chunks
 * (chunked-lines.ts). Throws the strict parse's HelixError for the first malformed line.
 * `mayBeStale`: false for an in_progress bead whose claim is certainly live (it cannot
 * be ready); such a bead is kept as its status only. Default: every one is kept whole.
 */
export function readReadyInput(file: string, opts: {mayBeStale?: (b: Bead) => boolean} = {}): ReadyInput {
  const mayBeStale = opts.mayBeStale ?? (() => true)
  // each line's id, and its bead when it may be ready, else its status
  const ids: string[] = []
  const values: Array<Bead | string> = []
  // id → parent, for the (few) beads that have one
  const parentOf = new Map<string, string>()
  eachTrackerText(file, (text, n) => {
    // the strict parse's text of the line (eachTrackerText refused an overlong line)
    const b = parseLine(text)
    if (typeof b === 'string') throw malformedError(file, n, b)
    const s = statusOf(b)
    ids.push(b.id)
    // an in_progress bead is ready only when its claim is stale; one whose claim is
    // certainly live is kept as its status, like a closed one
    values.push(s === 'open' || (s === 'in_progress' && mayBeStale(b)) ? b : s)
    const p = b.parent
    if (typeof p === 'string' && p !== '') parentOf.set(b.id, p)
    else if (parentOf.size > 0) parentOf.delete(b.id)
  })
  // id → that, in one pass after the parse (a Map keeps the first line's place and the last
  // line's value): inserting into a 100k-entry map between parses cost several times more,
  // measured (docs/performance.md)
  const byId = new Map<string, Bead | string>()
  for (let i = 0; i < ids.length; i++) byId.set(ids[i], values[i])
  const beads: Bead[] = []
  for (const v of byId.values()) if (typeof v !== 'string') beads.push(v)
  const parents = new Set(parentOf.values())
  return {
    beads,
    statusById(id) {
      const v = byId.get(id)
      return v === undefined || typeof v === 'string' ? v : statusOf(v)
    },
    hasChildren: (id) => parents.has(id),
  }
}
