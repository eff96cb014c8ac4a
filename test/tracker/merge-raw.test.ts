// Session 34 (tracker under fire): the merge driver re-encoded a value that only
// theirs changed from its parsed number, so `12345678901234567890` came back as
// `12345678901234567000` and `1.0` as `1`, with exit 0 (SPEC 13.2, 19.3). A value
// from theirs now keeps theirs' JSON text, as one from ours keeps ours'.
import {describe, expect, it} from 'vitest'
import {mergeTracker} from '../../src/tracker/merge.js'
import {HelixError} from '../../src/util/errors.js'

const head = '"id":"a","title":"t","status":"open","issue_type":"task","created_at":"2026-01-01T00:00:00Z"'
const rec = (rest: string) => Buffer.from(`{${head},${rest}}\n`)

describe('tracker merge keeps the JSON text of values either side brought', () => {
  it('values only theirs changed keep their text while ours changed another field', () => {
    const base = rec('"priority":2,"updated_at":"2026-01-01T00:00:00Z","x":1')
    const ours = rec('"priority":1,"updated_at":"2026-01-02T00:00:00Z","x":1,"o":-0')
    const theirs = rec('"priority":2,"updated_at":"2026-01-03T00:00:00Z","x":12345678901234567890,"y":1.0,"z":"\\u00e9"')
    for (const [a, b, mine] of [
      [ours, theirs, '"o":-0'],
      [theirs, ours, '"o":-0'],
    ] as const) {
      const text = mergeTracker({base, ours: a, theirs: b}).buf.toString('utf8')
      expect(text).toContain('"x":12345678901234567890')
      expect(text).toContain('"y":1.0')
      expect(text).toContain('"z":"\\u00e9"')
      expect(text).toContain(mine)
      expect(text).toContain('"priority":1')
      expect(text.split('\n').filter(Boolean)).toHaveLength(1)
    }
  })

  it('a number changed only in text JSON.parse reads as the same value: a conflict, never the other text with exit 0', () => {
    const base = rec('"priority":2,"updated_at":"2026-01-01T00:00:00Z","ext":12345678901234567890')
    const ours = rec('"priority":1,"updated_at":"2026-01-02T00:00:00Z","ext":12345678901234567890')
    const theirs = rec('"priority":2,"updated_at":"2026-01-03T00:00:00Z","ext":12345678901234567891')
    for (const sides of [{base, ours, theirs}, {base, ours: theirs, theirs: ours}]) {
      expect(() => mergeTracker(sides)).toThrow(HelixError)
      expect(() => mergeTracker(sides)).toThrow(/bead a: the sides write ext with numbers/)
    }
  })

  it('removed on one side while the other changed only a number\'s text: kept, and said', () => {
    const other = '{"id":"b","title":"b","status":"open"}\n'
    const base = Buffer.concat([rec('"priority":2,"updated_at":"2026-01-01T00:00:00Z","ext":1'), Buffer.from(other)])
    const theirs = Buffer.concat([rec('"priority":2,"updated_at":"2026-01-01T00:00:00Z","ext":1.0'), Buffer.from(other)])
    const r = mergeTracker({base, ours: Buffer.from(other), theirs})
    expect(r.buf.toString('utf8')).toContain('"ext":1.0')
    expect(r.notices).toEqual(['a was removed in ours and changed in theirs; keeping it'])
  })

  it('the same numbers on every side still merge field by field', () => {
    const base = rec('"priority":2,"updated_at":"2026-01-01T00:00:00Z","ext":12345678901234567890,"f":1.0')
    const ours = rec('"priority":1,"updated_at":"2026-01-02T00:00:00Z","ext":12345678901234567890,"f":1.0')
    const theirs = rec('"priority":2,"updated_at":"2026-01-03T00:00:00Z","ext":12345678901234567890,"f":1.0,"n":"2"')
    const text = mergeTracker({base, ours, theirs}).buf.toString('utf8')
    expect(text).toContain('"ext":12345678901234567890')
    expect(text).toContain('"f":1.0')
    expect(text).toContain('"n":"2"')
    expect(text).toContain('"priority":1')
  })
})
