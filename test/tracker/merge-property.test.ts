// SPEC 19.3 / 19.6: a property test of the tracker merge driver. Random concurrent
// edits of one tracker on two branches, from a seeded generator (reproducible: the
// failing case's seed is in the test name), always merge with no conflict, no lost
// bead, no lost note, no lost unknown field or label, and every line neither side
// changed (or only one side changed) comes back byte for byte.
import {describe, expect, it} from 'vitest'
import {mergeTracker} from '../../src/tracker/merge.js'
import {parseTracker} from '../../src/tracker/codec.js'

const CASES = 200
const SEED = 0x5eed17

/** mulberry32: a small seeded generator (no dependency). */
function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    chance: (p: number) => next() < p,
  }
}
type Rng = ReturnType<typeof rng>
type Rec = Record<string, unknown>

const STATUSES = ['open', 'in_progress', 'closed', 'blocked', 'cancelled', 'proposed'] as const
const time = (r: Rng) => new Date(Date.UTC(2026, 0, 1 + r.int(60), r.int(24), r.int(60), r.int(60), r.int(1000))).toISOString()
const unknownValue = (r: Rng): unknown => r.pick([() => r.int(1000), () => `v${r.int(1e6)}`, () => ({deep: [r.int(9), 'x'], on: true}), () => null, () => [1, 'two']])()

/** One bead's line as some other tool might have written it: key order and spacing vary. */
function oddLine(r: Rng, b: Rec): string {
  const keys = Object.keys(b)
  if (r.chance(0.5)) keys.reverse()
  const sep = r.chance(0.5) ? ', ' : ','
  return '{' + keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(b[k])}`).join(sep) + '}'
}

interface Side {
  beads: Map<string, Rec>
  /** the line each bead is written with: the base's own line while the side leaves it alone */
  lines: Map<string, string>
  order: string[]
  notes: Map<string, string[]>
  unknown: Map<string, string[]>
  labelsAdded: Map<string, string[]>
  labelsRemoved: Map<string, string[]>
  removed: Set<string>
  changed: Set<string>
  added: Set<string>
}

function baseTracker(r: Rng, n: number): Side {
  const side: Side = {beads: new Map(), lines: new Map(), order: [], notes: new Map(), unknown: new Map(), labelsAdded: new Map(), labelsRemoved: new Map(), removed: new Set(), changed: new Set(), added: new Set()}
  for (let i = 0; i < n; i++) {
    const id = `hx-${(0x10000000 + r.int(0xefffffff)).toString(16)}`
    if (side.beads.has(id)) continue
    const b: Rec = {id, title: `bead ${i}`, status: r.pick(STATUSES), priority: r.int(5), updated_at: time(r)}
    if (r.chance(0.6)) b.notes = `base note ${id}`
    if (r.chance(0.6)) b.labels = ['area:a', 'keep'].slice(0, 1 + r.int(2))
    if (r.chance(0.5)) b[`x-base-${r.int(3)}`] = unknownValue(r)
    side.beads.set(id, b)
    side.lines.set(id, oddLine(r, b))
    side.order.push(id)
  }
  return side
}

function copySide(s: Side): Side {
  return {...s, beads: new Map([...s.beads].map(([k, v]) => [k, structuredClone(v)])), lines: new Map(s.lines), order: [...s.order], notes: new Map(), unknown: new Map(), labelsAdded: new Map(), labelsRemoved: new Map(), removed: new Set(), changed: new Set(), added: new Set()}
}

const push = (m: Map<string, string[]>, k: string, v: string) => m.set(k, [...(m.get(k) ?? []), v])

/** Random edits of one branch, remembered so the checks know what must survive. */
function edit(r: Rng, s: Side, tag: string, sharedNew: Rec | undefined): void {
  const ids = [...s.order]
  const edits = 1 + r.int(6)
  for (let e = 0; e < edits; e++) {
    const id = r.pick(ids)
    const b = s.beads.get(id)
    if (b === undefined) continue
    const what = r.int(8)
    if (what === 0 && r.chance(0.4)) {
      s.beads.delete(id)
      s.lines.delete(id)
      s.order = s.order.filter((x) => x !== id)
      s.removed.add(id)
      continue
    }
    if (what === 1) b.status = r.pick(STATUSES)
    else if (what === 2) b.priority = r.int(5)
    else if (what === 3) {
      const note = `note ${tag}-${e}-${r.int(1e6)}`
      b.notes = typeof b.notes === 'string' && b.notes !== '' ? `${b.notes}\n\n${note}` : note
      push(s.notes, id, note)
    } else if (what === 4) {
      const label = `l-${tag}-${e}`
      b.labels = [...((b.labels as string[] | undefined) ?? []), label]
      push(s.labelsAdded, id, label)
    } else if (what === 5 && Array.isArray(b.labels) && b.labels.length > 0) {
      const gone = r.pick(b.labels as string[])
      b.labels = (b.labels as string[]).filter((l) => l !== gone)
      push(s.labelsRemoved, id, gone)
    } else {
      const key = `u-${tag}-${e}`
      b[key] = unknownValue(r)
      push(s.unknown, id, key)
    }
    b.updated_at = time(r)
    s.changed.add(id)
    s.lines.set(id, JSON.stringify(b))
  }
  const fresh: Rec[] = []
  if (r.chance(0.5)) fresh.push({id: `hx-new-${tag}-${r.int(1e6)}`, title: `new on ${tag}`, status: 'open', notes: `new note ${tag}`, [`u-new-${tag}`]: unknownValue(r), updated_at: time(r)})
  if (sharedNew) fresh.push({...structuredClone(sharedNew), notes: `${sharedNew.notes}\n\nshared ${tag}`, updated_at: time(r)})
  for (const b of fresh) {
    s.beads.set(b.id as string, b)
    s.lines.set(b.id as string, JSON.stringify(b))
    s.order.splice(r.int(s.order.length + 1), 0, b.id as string)
    s.added.add(b.id as string)
    for (const n of (b.notes as string).split('\n\n')) push(s.notes, b.id as string, n)
    for (const k of Object.keys(b)) if (k.startsWith('u-')) push(s.unknown, b.id as string, k)
  }
}

const fileOf = (s: Side) => Buffer.from(s.order.map((id) => s.lines.get(id)! + '\n').join(''))

describe('tracker merge property: random concurrent edits on two branches', () => {
  for (let c = 0; c < CASES; c++) {
    const seed = SEED + c
    it(`case ${c} (seed ${seed})`, () => {
      const r = rng(seed)
      const base = baseTracker(r, 3 + r.int(10))
      const ours = copySide(base)
      const theirs = copySide(base)
      const shared = r.chance(0.3) ? {id: `hx-both-${r.int(1e6)}`, title: 'added on both', status: 'open', notes: 'both'} : undefined
      edit(r, ours, 'o', shared)
      edit(r, theirs, 't', shared)
      const result = mergeTracker({base: fileOf(base), ours: fileOf(ours), theirs: fileOf(theirs)})
      const merged = parseTracker(result.buf, 'merged')
      expect(merged.duplicateIds).toEqual([])
      const out = merged.byId
      const outLines = new Set(result.buf.toString('utf8').split('\n'))

      for (const id of new Set([...base.order, ...ours.order, ...theirs.order])) {
        const inO = ours.beads.has(id)
        const inT = theirs.beads.has(id)
        // no lost bead: kept by both, new on a side, or removed on one side but changed on the other
        const mustStay = (inO && inT) || (!base.beads.has(id) && (inO || inT)) || (inO && ours.changed.has(id)) || (inT && theirs.changed.has(id))
        const mustGo = !inO && !inT
        if (mustStay) expect(out.has(id), `bead ${id}`).toBe(true)
        if (mustGo) expect(out.has(id), `bead ${id} removed on both`).toBe(false)
        const m = out.get(id) as Rec | undefined
        if (m === undefined) continue
        // no lost note paragraph, unknown field or added label
        const notes = typeof m.notes === 'string' ? m.notes : ''
        for (const side of [ours, theirs]) {
          if (!side.beads.has(id)) continue
          for (const n of side.notes.get(id) ?? []) expect(notes, `note of ${id}`).toContain(n)
          for (const k of side.unknown.get(id) ?? []) expect(m, `unknown field of ${id}`).toHaveProperty([k])
          const other = side === ours ? theirs : ours
          const removedByOther = new Set(other.labelsRemoved.get(id) ?? [])
          const has = new Set((side.beads.get(id)!.labels as string[] | undefined) ?? [])
          for (const l of side.labelsAdded.get(id) ?? []) if (has.has(l) && !removedByOther.has(l)) expect(m.labels, `label of ${id}`).toContain(l)
        }
        for (const k of Object.keys(base.beads.get(id) ?? {})) if (k.startsWith('x-')) expect(m, `base unknown field of ${id}`).toHaveProperty([k])
        // a side that closed the bead wins over any other status change
        const baseStatus = base.beads.get(id)?.status
        if ([ours, theirs].some((s) => s.beads.get(id)?.status === 'closed' && baseStatus !== 'closed')) expect(m.status).toBe('closed')
        // byte for byte: a bead only one side changed is that side's very line
        const o = ours.lines.get(id)
        const t = theirs.lines.get(id)
        if (o !== undefined && o === t) expect(outLines.has(o), `unchanged line of ${id}`).toBe(true)
        else if (o !== undefined && t !== undefined && o === base.lines.get(id)) expect(outLines.has(t), `their line of ${id}`).toBe(true)
        else if (o !== undefined && t !== undefined && t === base.lines.get(id)) expect(outLines.has(o), `our line of ${id}`).toBe(true)
      }
    })
  }
})
