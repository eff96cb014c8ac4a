// issue 30: the merge driver lost data or changed bytes it does not own, and exited 0.
// Now it keeps every field it cannot merge by the SPEC 19.3 rules or fails (git then
// shows a conflict), and the result keeps ours' BOM and line endings.
import {describe, expect, it} from 'vitest'
import {mergeTracker} from '../../src/tracker/merge.js'
import {parseTracker} from '../../src/tracker/codec.js'
import {HelixError} from '../../src/util/errors.js'

type Rec = Record<string, unknown>
const T0 = '2026-01-01T00:00:00.000Z'
const T1 = '2026-01-02T00:00:00.000Z'
const T2 = '2026-01-03T00:00:00.000Z'
const BOM = Buffer.from([0xef, 0xbb, 0xbf])
const file = (lines: string[], eol = '\n') => Buffer.from(lines.map((l) => l + eol).join(''))
const bead = (id: string, extra: Rec = {}): Rec => ({id, title: `t ${id}`, status: 'open', updated_at: T0, ...extra})
const line = (b: Rec) => JSON.stringify(b)

function parsed(buf: Buffer): Map<string, Rec> {
  return parseTracker(buf, 'merged').byId as unknown as Map<string, Rec>
}

describe('tracker merge keeps what it cannot merge', () => {
  it('an unknown field named __proto__ survives the other side editing the title', () => {
    const withProto = '{"id":"a","title":"t a","status":"open","updated_at":"2026-01-01T00:00:00.000Z","__proto__":{"x":1}}'
    const base = file(['{"id":"a","title":"t a","status":"open","updated_at":"2026-01-01T00:00:00.000Z"}'])
    const ours = file([withProto.replace('"title":"t a"', '"title":"t a"').replace(T0, T1)])
    const theirs = file([line(bead('a', {title: 'renamed', updated_at: T2}))])
    const r = mergeTracker({base, ours, theirs})
    const text = r.buf.toString('utf8')
    expect(text).toContain('"__proto__":{"x":1}')
    expect(text).toContain('"title":"renamed"')
    // both directions
    const back = mergeTracker({base, ours: theirs, theirs: ours}).buf.toString('utf8')
    expect(back).toContain('"__proto__":{"x":1}')
    expect(back).toContain('"title":"renamed"')
  })

  it('__proto__ changed on both sides keeps a whole value, never an empty one', () => {
    const mk = (v: string, t: string, title: string) => `{"id":"a","title":"${title}","status":"open","updated_at":"${t}","__proto__":${v}}`
    const r = mergeTracker({base: file([mk('{"v":0}', T0, 't')]), ours: file([mk('{"v":1}', T1, 'o')]), theirs: file([mk('{"v":2}', T2, 't')])})
    expect(r.buf.toString('utf8')).toContain('"__proto__":{"v":2}')
  })

  it('notes made a list on one side while the other appends a paragraph: the merge fails, nothing is lost silently', () => {
    const base = file([line(bead('a', {notes: 'first'}))])
    const ours = file([line(bead('a', {notes: ['first', 'as a list'], updated_at: T2}))])
    const theirs = file([line(bead('a', {notes: 'first\n\nappended', updated_at: T1}))])
    for (const sides of [{base, ours, theirs}, {base, ours: theirs, theirs: ours}]) {
      expect(() => mergeTracker(sides)).toThrow(HelixError)
      expect(() => mergeTracker(sides)).toThrow(/bead a: both sides changed notes/)
    }
  })

  it('labels that are not a list on one side, changed on both: the merge fails', () => {
    const base = file([line(bead('a', {labels: ['x']}))])
    const ours = file([line(bead('a', {labels: 'x,y', updated_at: T2}))])
    const theirs = file([line(bead('a', {labels: ['x', 'z'], updated_at: T1}))])
    expect(() => mergeTracker({base, ours, theirs})).toThrow(/bead a: both sides changed labels/)
  })

  it("a BOM on theirs does not land in the result; ours' BOM stays", () => {
    const base = file([line(bead('a')), line(bead('b'))])
    const ours = file([line(bead('a')), line(bead('b', {priority: 1, updated_at: T1}))])
    const theirs = Buffer.concat([BOM, file([line(bead('a', {priority: 3, updated_at: T2})), line(bead('b'))])])
    const r = mergeTracker({base, ours, theirs})
    expect(r.buf.subarray(0, 3).equals(BOM)).toBe(false)
    expect(r.buf.toString('utf8')).toBe(file([line(bead('a', {priority: 3, updated_at: T2})), line(bead('b', {priority: 1, updated_at: T1}))]).toString('utf8'))
    // ours with a BOM keeps it, once
    const oursBom = Buffer.concat([BOM, ours])
    const r2 = mergeTracker({base, ours: oursBom, theirs})
    expect(r2.buf.subarray(0, 3).equals(BOM)).toBe(true)
    expect(r2.buf.subarray(3, 6).equals(BOM)).toBe(false)
    expect(parsed(r2.buf).get('a')!.priority).toBe(3)
  })

  it("a CRLF theirs does not change ours' LF lines, and an LF theirs does not change ours' CRLF lines", () => {
    const base = file([line(bead('a')), line(bead('b')), line(bead('c'))])
    const oursLf = file([line(bead('a', {priority: 1, updated_at: T1})), line(bead('b')), line(bead('c'))])
    const theirsCrlf = file([line(bead('a')), line(bead('b')), line(bead('c', {priority: 2, updated_at: T2}))], '\r\n')
    const r = mergeTracker({base, ours: oursLf, theirs: theirsCrlf})
    expect(r.buf.includes('\r')).toBe(false)
    expect(r.buf.toString('utf8')).toBe(file([line(bead('a', {priority: 1, updated_at: T1})), line(bead('b')), line(bead('c', {priority: 2, updated_at: T2}))]).toString('utf8'))

    const baseCrlf = file([line(bead('a')), line(bead('b')), line(bead('c'))], '\r\n')
    const oursCrlf = file([line(bead('a', {priority: 1, updated_at: T1})), line(bead('b')), line(bead('c'))], '\r\n')
    const theirsLf = file([line(bead('a')), line(bead('b')), line(bead('c', {priority: 2, updated_at: T2})), line(bead('d'))])
    const r2 = mergeTracker({base: baseCrlf, ours: oursCrlf, theirs: theirsLf})
    expect(r2.buf.toString('utf8')).toBe(file([line(bead('a', {priority: 1, updated_at: T1})), line(bead('b')), line(bead('c', {priority: 2, updated_at: T2})), line(bead('d'))], '\r\n').toString('utf8'))
  })
})
