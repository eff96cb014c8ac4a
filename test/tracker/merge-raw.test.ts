// Session 34 (tracker under fire): the merge driver re-encoded a value that only
// theirs changed from its parsed number, so `12345678901234567890` came back as
// `12345678901234567000` and `1.0` as `1`, with exit 0 (SPEC 13.2, 19.3). A value
// from theirs now keeps theirs' JSON text, as one from ours keeps ours'.
import {describe, expect, it} from 'vitest'
import {mergeTracker} from '../../src/tracker/merge.js'

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
})
