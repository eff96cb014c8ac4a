// Issue 11: the tracker cache may reuse earlier parses, but what callers see must be
// exactly what a fresh parse of the file's bytes gives (SPEC 13.2 bytes included).
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {cowSnapshot, parseTracker, parseTrackerAfter, rawOf, serializeTrackerBuffer, serializeTrackerWithSnapshot} from '../../src/tracker/codec.js'
import {indexOf} from '../../src/tracker/line-index.js'
import {clearTrackerCache, mutateTracker, readTracker} from '../../src/tracker/store.js'
import type {TrackerSnapshot} from '../../src/tracker/types.js'
import {REAL_HELIX, tempProject} from './helpers.js'

/** everything a caller can observe of a snapshot */
function view(s: TrackerSnapshot) {
  return {
    beads: s.beads.map((b) => ({json: JSON.stringify(b), keys: Object.keys(b), bytes: rawOf(b)!.bytes.toString('hex'), text: rawOf(b)!.text})),
    ids: [...s.byId.keys()],
    byIdSame: s.beads.every((b) => s.byId.get(b.id) === b),
    dupes: s.duplicateIds,
  }
}

const sameList = (x: readonly string[], y: readonly string[]) => x.length === y.length && x.every((v, i) => v === y[i])

/** the first place two snapshots' views differ, or null: view() part by part, without building it */
function viewDiff(a: TrackerSnapshot, b: TrackerSnapshot): string | null {
  if (a.beads.length !== b.beads.length) return 'bead count'
  for (let i = 0; i < a.beads.length; i++) {
    const x = a.beads[i]
    const y = b.beads[i]
    if (JSON.stringify(x) !== JSON.stringify(y)) return `bead ${i}: json`
    if (!sameList(Object.keys(x), Object.keys(y))) return `bead ${i}: keys`
    if (!rawOf(x)!.bytes.equals(rawOf(y)!.bytes)) return `bead ${i}: bytes`
    if (rawOf(x)!.text !== rawOf(y)!.text) return `bead ${i}: text`
    if (a.byId.get(x.id) !== x || b.byId.get(y.id) !== y) return `bead ${i}: byId`
  }
  if (!sameList([...a.byId.keys()], [...b.byId.keys()])) return 'ids'
  if (!sameList(a.duplicateIds, b.duplicateIds)) return 'dupes'
  return null
}

/**
 * expect(view(actual)).toEqual(view(expected)), checked part by part first: building both views
 * of the real tracker (a hex copy of its bytes) and deep-comparing them cost ~0.3 s a call, 34
 * calls. The full toEqual (and its diff) runs when a part differs.
 */
function expectSameView(actual: TrackerSnapshot, expected: TrackerSnapshot, label: unknown): void {
  const diff = viewDiff(actual, expected)
  if (diff === null) return
  expect({label, diff, v: view(actual)}).toEqual({label, diff, v: view(expected)})
}

function outcome(f: () => TrackerSnapshot): unknown {
  try {
    return view(f())
  } catch (error) {
    return {error: (error as Error).message}
  }
}

/** a small deterministic PRNG so a failure can be replayed */
function rng(seed: number) {
  let x = seed | 0 || 1
  return (n: number) => {
    // xorshift32
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) % n
  }
}

const LINES = [
  '{"id":"a-1","status":"open","title":"one"}',
  '{"title":"two","id":"a-2","status":"closed"}',
  '  {"id":"a-3", "n": 12345678901234567890, "x": 1.0}  ',
  '{"id":"a-4","title":"caf\\u00e9 <b>"}\r',
  '{"id":"a-1","status":"closed","title":"one again"}',
  '',
  '   ',
  Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0x61, 0x2d, 0x35, 0x22, 0x2c, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('latin1'),
  '{"id":"a-6","deps":[{"b":1,"a":2}],"labels":["x","y"]}',
  'not json',
  '{"id":""}',
]

function fileOf(lines: string[], finalNewline: boolean): Buffer {
  const buf = Buffer.concat(lines.map((l) => Buffer.from(l + '\n', 'latin1')))
  return finalNewline ? buf : buf.subarray(0, -1)
}

describe('incremental parse equals a fresh parse', () => {
  it('over random edits (insert, delete, change, duplicate, blank, CRLF, invalid UTF-8, malformed, leading/trailing blanks, no final newline)', () => {
    const next = rng(7)
    const good = LINES.slice(0, 9)
    let lines = Array.from({length: 40}, (_, i) => `{"id":"b-${String(i).padStart(3, '0')}","status":"open","title":"t${i}"}`)
    let prevBuf = fileOf(lines, true)
    let prev = parseTracker(prevBuf, 'f')
    for (let round = 0; round < 400; round++) {
      const edits = 1 + next(3)
      for (let e = 0; e < edits; e++) {
        const at = next(lines.length + 1)
        const op = next(6)
        const pick = next(20) === 0 ? LINES[9 + next(2)] : good[next(good.length)]
        if (op === 0) lines.splice(at, 0, pick)
        else if (op === 1 && lines.length > 1) lines.splice(Math.min(at, lines.length - 1), 1)
        else if (op === 2 && lines.length) lines[Math.min(at, lines.length - 1)] = pick
        else if (op === 3) lines.splice(at, 0, `{"id":"c-${round}-${e}","title":"new"}`)
        else if (op === 4 && lines.length) lines[Math.min(at, lines.length - 1)] += ' '
        else if (lines.length) lines[Math.min(at, lines.length - 1)] = ' ' + lines[Math.min(at, lines.length - 1)]
      }
      const buf = fileOf(lines, next(4) !== 0)
      const fresh = outcome(() => parseTracker(buf, 'f'))
      const inc = outcome(() => parseTrackerAfter(buf, 'f', prev))
      expect(inc, `round ${round}`).toEqual(fresh)
      if (!('error' in (fresh as object))) {
        prev = parseTrackerAfter(buf, 'f', prev)
        prevBuf = buf
      } else {
        // drop the malformed line again so the walk goes on
        lines = lines.filter((l) => l !== LINES[9] && l !== LINES[10])
      }
    }
    expect(prevBuf.length).toBeGreaterThan(0)
  })

  it('after a write: the snapshot kept for the cache equals a fresh parse of the written bytes, and so does the next incremental parse', () => {
    const text = readFileSync(REAL_HELIX)
    const base = parseTracker(text, 'f')
    const copy = cowSnapshot(base)
    const target = copy.byId.get(copy.beads[Math.floor(copy.beads.length / 2)].id)!
    target.notes = 'changed'
    const same = copy.byId.get(copy.beads[3].id)!
    same.status = same.status
    const out = copy.resolve(copy.beads)
    const {buf, snap} = serializeTrackerWithSnapshot(out.beads, {untouched: out.untouched})
    expect(buf.equals(serializeTrackerBuffer(parseTracker(text, 'f').beads.map((b) => (b.id === target.id ? Object.assign(b, {notes: 'changed'}) : b))))).toBe(true)
    expectSameView(snap!, parseTracker(buf, 'f'), 'the written snapshot')
    // the cached parse was never touched by the mutation
    expectSameView(base, parseTracker(text, 'f'), 'the cached parse')
    // an external one-line change on top of our write
    const lines = buf.toString('utf8').split('\n')
    lines[10] = lines[10].replace('}', ',"extra":true}')
    const ext = Buffer.from(lines.join('\n'))
    expectSameView(parseTrackerAfter(ext, 'f', snap!), parseTracker(ext, 'f'), 'an external change')
    // the written snapshot keeps the write's parts (no one-buffer copy): changes anywhere, at and
    // around the part boundaries (the changed bead's line), growing, shrinking, appended, removed
    const written = buf.toString('utf8').split('\n')
    const mid = written.findIndex((l) => l.includes('"notes":"changed"'))
    expect(mid).toBeGreaterThan(0)
    expect(indexOf(snap!)!.parts.length).toBeGreaterThan(2)
    const n = lines.length - 1
    for (const at of [0, 1, 3, mid - 1, mid, mid + 1, n - 2, n - 1]) {
      const shrink = (l: string) => {
        const o = JSON.parse(l) as Record<string, unknown>
        delete o[Object.keys(o).find((k) => k !== 'id')!]
        return JSON.stringify(o)
      }
      for (const edit of [(l: string) => l.slice(0, -1) + ',"extra":true}', shrink, (l: string) => l + '\n' + JSON.stringify({id: `zz-${at}`}), () => null]) {
        const ls = written.slice()
        const e = edit(ls[at])
        if (e === null) ls.splice(at, 1)
        else ls[at] = e
        const changed = Buffer.from(ls.join('\n'))
        expectSameView(parseTrackerAfter(changed, 'f', snap!), parseTracker(changed, 'f'), {at})
      }
    }
  })
})

describe('store cache: mutations never leak into shared snapshots', () => {
  it('a snapshot from readTracker is unchanged by a later mutation, and the cache follows writes and external edits', async () => {
    const p = tempProject()
    {
      const odd = ['{"title":"x",  "id":"hx-1","status":"open"}', '{"id":"hx-2","status":"open","big":12345678901234567890}', '{"id":"hx-3","status":"open"}']
      writeFileSync(p.paths.file, odd.join('\r\n') + '\r\n')
      clearTrackerCache()
      const before = await readTracker(p.paths.file)
      await mutateTracker(p.paths, (s) => {
        s.byId.get('hx-3')!.status = 'closed'
        return {beads: s.beads, result: null}
      })
      expect(before.byId.get('hx-3')!.status).toBe('open')
      const after = await readTracker(p.paths.file)
      expect(after.byId.get('hx-3')!.status).toBe('closed')
      const bytes = readFileSync(p.paths.file)
      // unchanged lines byte for byte, their CRLF included (SPEC 13.2); the changed one canonical
      expect(bytes.toString('utf8').split('\n')).toEqual([odd[0] + '\r', odd[1] + '\r', '{"id":"hx-3","status":"closed"}', ''])
      expect(view(after)).toEqual(view(parseTracker(bytes, 'f')))
      // a second mutation on the cached copy: still byte-exact for the untouched lines
      await mutateTracker(p.paths, (s) => {
        s.byId.get('hx-1')!.status = 'in_progress'
        return {beads: s.beads, result: null}
      })
      const lines2 = readFileSync(p.paths.file, 'utf8').split('\n')
      expect(lines2[1]).toBe(odd[1] + '\r')
      expect(lines2[2]).toBe('{"id":"hx-3","status":"closed"}')
      // an external edit of the same size is seen (new inode / mtime), and parsed right
      const ext = readFileSync(p.paths.file, 'utf8').replace('"closed"', '"blocked"')
      writeFileSync(path.join(p.paths.dir, 'tmp'), ext)
      const {renameSync} = await import('node:fs')
      renameSync(path.join(p.paths.dir, 'tmp'), p.paths.file)
      const seen = await readTracker(p.paths.file)
      expect(seen.byId.get('hx-3')!.status).toBe('blocked')
      expect(view(seen)).toEqual(view(parseTracker(readFileSync(p.paths.file), 'f')))
    }
  })
})
