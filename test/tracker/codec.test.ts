import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parseTracker, parseTrackerLenient, serializeBead, serializeBeadSlow, serializeTracker} from '../../src/tracker/codec.js'
import {HelixError} from '../../src/util/errors.js'

const REAL = ['/work/shared/fixtures/real-trackers/helix-beads.jsonl', '/work/shared/fixtures/real-trackers/ddx-beads.jsonl']

describe('codec: real DDx trackers', () => {
  for (const file of REAL) {
    it(`re-serializes ${file.split('/').pop()} byte-identically`, () => {
      const text = readFileSync(file, 'utf8')
      const snap = parseTracker(text, file)
      expect(snap.beads.length).toBeGreaterThan(100)
      expect(serializeTracker(snap.beads)).toBe(text)
    })

    it(`a one-bead change in ${file.split('/').pop()} changes only that line`, () => {
      const text = readFileSync(file, 'utf8')
      const snap = parseTracker(text, file)
      const target = snap.beads[Math.floor(snap.beads.length / 2)]
      target.notes = (target.notes ?? '') + '\n\nchanged <here> & "there"'
      const out = serializeTracker(snap.beads).split('\n')
      const before = text.split('\n')
      expect(out.length).toBe(before.length)
      const diff = out.map((l, i) => (l === before[i] ? -1 : i)).filter((i) => i >= 0)
      expect(diff).toHaveLength(1)
      expect(JSON.parse(out[diff[0]]).id).toBe(target.id)
      expect(out[diff[0]]).toContain('changed \\u003chere\\u003e \\u0026 \\"there\\"')
    })
  }
})

describe('codec: fast path (native stringify) equals the reference encoder', () => {
  it('on every record of both real trackers', () => {
    for (const file of REAL) {
      for (const b of parseTracker(readFileSync(file, 'utf8'), file).beads) expect(serializeBead(b)).toBe(serializeBeadSlow(b))
    }
  })

  it('on records whose keys are out of order, integer-like, nested, or empty-omitted', () => {
    const cases = [
      {title: 'x', id: 'a'},
      {id: 'a', '10': 1, '9': 2, z: 3},
      {id: 'a', meta: {b: 1, a: {d: 1, c: 2}}},
      {id: 'a', dependencies: [{depends_on_id: 'b', issue_id: 'a', type: 'blocks'}]},
      {id: 'a', dependencies: [{issue_id: 'a', depends_on_id: 'b', type: 'blocks', created_at: 't', zz: {b: 1, a: 2}}]},
      {id: 'a', notes: '', owner: 'me'},
      {id: 'a', n: Number.NaN, list: [{b: 1, a: 2}, 'x <&> \u2028']},
    ]
    for (const c of cases) expect(serializeBead(c)).toBe(serializeBeadSlow(c))
    expect(serializeBead({title: 'x', id: 'a'})).toBe('{"id":"a","title":"x"}')
  })
})

describe('codec: rules', () => {
  it('sorts keys, keeps dependency key order, escapes html chars and separators, keeps non-ASCII raw', () => {
    const line = serializeBead({
      title: 'é <b> & \u2028 \u2029 ☃',
      id: 'hx-1',
      zeta: {b: 1, a: [{y: 1, x: 2}]},
      dependencies: [{created_at: 't', type: 'blocks', depends_on_id: 'hx-0', issue_id: 'hx-1', zz: 1, created_by: 'me', aa: 2}],
    })
    expect(line).toBe(
      '{"dependencies":[{"issue_id":"hx-1","depends_on_id":"hx-0","type":"blocks","created_at":"t","created_by":"me","aa":2,"zz":1}],' +
        '"id":"hx-1","title":"é \\u003cb\\u003e \\u0026 \\u2028 \\u2029 ☃","zeta":{"a":[{"x":2,"y":1}],"b":1}}',
    )
  })

  it('omits only the DDx-omitted empty fields and keeps other empty strings', () => {
    const line = serializeBead({id: 'a', owner: '', labels: [], parent: '', description: '', acceptance: '', notes: '', dependencies: [], design: '', 'superseded-by': ''})
    expect(line).toBe('{"design":"","id":"a","superseded-by":""}')
  })

  it('keeps unknown keys (with dots) and values verbatim', () => {
    const text = '{"a.b":{"c":[1,"x",null,true]},"claimed-pid":"123","id":"x","status":"deferred"}\n'
    const snap = parseTracker(text, 'f')
    expect(snap.byId.get('x')!['claimed-pid']).toBe('123')
    expect(serializeTracker(snap.beads)).toBe(text)
  })

  it('skips blank lines; duplicate ids: last wins and are reported', () => {
    const text = '{"id":"a","title":"one"}\n\n   \n{"id":"b"}\n{"id":"a","title":"two"}\n'
    const snap = parseTracker(text, 'f')
    expect(snap.beads.map((b) => b.id)).toEqual(['a', 'b'])
    expect(snap.byId.get('a')!.title).toBe('two')
    expect(snap.duplicateIds).toEqual(['a'])
    expect(serializeTracker(snap.beads)).toBe('{"id":"a","title":"two"}\n{"id":"b"}\n')
  })

  it('tolerates a BOM and CRLF line endings', () => {
    const snap = parseTracker('\ufeff{"id":"a"}\r\n{"id":"b"}\r\n', 'f')
    expect(snap.beads.map((b) => b.id)).toEqual(['a', 'b'])
  })

  it('sorts records by id bytewise', () => {
    expect(serializeTracker([{id: 'b'}, {id: 'B'}, {id: 'a'}])).toBe('{"id":"B"}\n{"id":"a"}\n{"id":"b"}\n')
    expect(serializeTracker([])).toBe('')
  })

  it('malformed lines throw the exact message with file and line', () => {
    const cases: Array<[string, string]> = [
      ['{"id":"a"}\n{"id":"b"\n', 'f.jsonl:2: malformed bead (invalid JSON'],
      ['{"id":"a"}\n\n[1,2]\n', 'f.jsonl:3: malformed bead (not a JSON object)'],
      ['{"title":"x"}\n', 'f.jsonl:1: malformed bead (missing string "id")'],
      ['{"id":7}\n', 'f.jsonl:1: malformed bead (missing string "id")'],
    ]
    for (const [text, prefix] of cases) {
      let err: unknown
      try {
        parseTracker(text, 'f.jsonl')
      } catch (error) {
        err = error
      }
      expect(err).toBeInstanceOf(HelixError)
      const msg = (err as HelixError).message
      expect(msg.startsWith(prefix)).toBe(true)
      expect(msg.endsWith(") — run 'helix tracker doctor' to inspect or repair")).toBe(true)
      expect(msg).not.toContain('\n')
      expect((err as HelixError).exitCode).toBe(1)
    }
  })

  it('lenient parse returns malformed lines verbatim with their numbers', () => {
    const {snapshot, malformed} = parseTrackerLenient('{"id":"a"}\nnot json\n{"id":"b"}\n{}\n')
    expect(snapshot.beads.map((b) => b.id)).toEqual(['a', 'b'])
    expect(malformed.map((m) => [m.line, m.text])).toEqual([
      [2, 'not json'],
      [4, '{}'],
    ])
  })

  it('handles a 16 MiB line', () => {
    const big = 'x'.repeat(16 * 1024 * 1024 - 100)
    const line = serializeBead({id: 'big', notes: big})
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(16 * 1024 * 1024)
    const snap = parseTracker(line + '\n{"id":"small"}\n', 'f')
    expect((snap.byId.get('big')!.notes as string).length).toBe(big.length)
    expect(serializeTracker(snap.beads)).toBe(line + '\n{"id":"small"}\n')
  })
})
