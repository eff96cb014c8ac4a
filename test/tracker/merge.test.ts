// SPEC 19.3: the tracker's three-way merge, rule by rule.
import {describe, expect, it} from 'vitest'
import {readFileSync} from 'node:fs'
import {mergeTracker} from '../../src/tracker/merge.js'
import {mergeNotes} from '../../src/tracker/merge-fields.js'
import {parseTracker} from '../../src/tracker/codec.js'
import {HelixError} from '../../src/util/errors.js'
import {REAL_DDX} from '../real-trackers.js'

type Rec = Record<string, unknown>
const line = (b: Rec) => JSON.stringify(b)
const file = (...beads: Array<Rec | string>) => Buffer.from(beads.map((b) => (typeof b === 'string' ? b : line(b)) + '\n').join(''))
const T0 = '2026-01-01T00:00:00.000Z'
const T1 = '2026-01-02T00:00:00.000Z'
const T2 = '2026-01-03T00:00:00.000Z'

function merge(base: Buffer, ours: Buffer, theirs: Buffer) {
  const r = mergeTracker({base, ours, theirs})
  const snap = parseTracker(r.buf, 'merged')
  return {...r, text: r.buf.toString('utf8'), get: (id: string) => snap.byId.get(id) as Rec | undefined, ids: snap.beads.map((b) => b.id)}
}

const bead = (id: string, extra: Rec = {}): Rec => ({id, title: `t ${id}`, status: 'open', updated_at: T0, ...extra})

describe('tracker merge: whole beads', () => {
  it('different beads changed on each side: both changes, other lines byte for byte, base order kept', () => {
    // odd spacing and key order: an unchanged line must come back exactly as it was
    const odd = '{ "title": "t c", "id": "c",   "x": 1.0 }'
    const base = file(bead('a'), bead('b'), odd)
    const ours = file(bead('a', {status: 'closed', updated_at: T1}), bead('b'), odd)
    const theirs = file(bead('a'), bead('b', {priority: 0, updated_at: T2}), odd)
    const m = merge(base, ours, theirs)
    expect(m.text).toBe(file(bead('a', {status: 'closed', updated_at: T1}), bead('b', {priority: 0, updated_at: T2}), odd).toString())
    expect(m.notices).toEqual([])
  })

  it('new beads are appended after the base order: ours first, then theirs; the same new bead on both sides once', () => {
    const base = file(bead('m'))
    const ours = file(bead('a'), bead('m'), bead('z'))
    const theirs = file(bead('b'), bead('m'), bead('z'))
    expect(merge(base, ours, theirs).ids).toEqual(['m', 'a', 'z', 'b'])
  })

  it('removed on one side and unchanged on the other: removed', () => {
    const base = file(bead('a'), bead('b'))
    const m = merge(base, file(bead('b')), file(bead('a', {}), bead('b', {priority: 1})))
    expect(m.ids).toEqual(['b'])
    expect(m.notices).toEqual([])
  })

  it('removed on one side and changed on the other: kept, and said on stderr', () => {
    const base = file(bead('a'), bead('b'))
    const theirsA = bead('a', {notes: 'still needed', updated_at: T1})
    const m = merge(base, file(bead('b'), bead('c')), file(theirsA, bead('b')))
    expect(m.get('a')).toEqual(theirsA)
    expect(m.notices).toEqual(['a was removed in ours and changed in theirs; keeping it'])
    const m2 = merge(base, file(theirsA, bead('b'), bead('c')), file(bead('b')))
    expect(m2.notices).toEqual(['a was removed in theirs and changed in ours; keeping it'])
  })

  it('the same id added on both sides with different content merges as if the base were empty', () => {
    const ours = bead('n', {notes: 'from ours', labels: ['x'], updated_at: T1})
    const theirs = bead('n', {notes: 'from theirs', labels: ['y'], priority: 1, updated_at: T2})
    const m = merge(file(), file(ours), file(theirs))
    expect(m.get('n')).toMatchObject({notes: 'from ours\n\nfrom theirs', labels: ['x', 'y'], priority: 1, updated_at: T2})
  })

  it("one side unchanged: the other side is the result byte for byte, in ours' BOM and line endings", () => {
    const base = file(bead('a'))
    const changed = Buffer.from(line(bead('a', {priority: 1})) + '\r\n')
    const theirs = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), changed])
    // theirs unchanged: ours as it is, CRLF, BOM and all
    expect(merge(base, theirs, base).buf.equals(theirs)).toBe(true)
    // ours unchanged: theirs' beads, in ours' form (no BOM, LF)
    expect(merge(base, base, theirs).text).toBe(line(bead('a', {priority: 1})) + '\n')
    const oursForm = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(line(bead('a')) + '\r\n')])
    expect(merge(oursForm, oursForm, theirs).buf.equals(theirs)).toBe(true)
  })

  it('a real DDx tracker with one change on each side: every other line byte for byte', () => {
    const real = readFileSync(REAL_DDX)
    const lines = real.toString('utf8').split('\n')
    const ours = [...lines]
    const theirs = [...lines]
    const i = lines.findIndex((l) => l.includes('"status":"open"'))
    const j = lines.findIndex((l, k) => k > i && l.includes('"status":"open"'))
    ours[i] = ours[i].replace('"status":"open"', '"status":"closed"')
    theirs[j] = theirs[j].replace('"status":"open"', '"status":"cancelled"')
    const m = merge(real, Buffer.from(ours.join('\n')), Buffer.from(theirs.join('\n')))
    const want = [...lines]
    want[i] = ours[i]
    want[j] = theirs[j]
    expect(m.text).toBe(want.join('\n'))
  })
})

describe('tracker merge: one bead changed on both sides', () => {
  it('a field changed on one side takes that side; unknown fields from either side are kept', () => {
    const base = file(bead('a', {x: 1}))
    const ours = file(bead('a', {title: 'new title', x: 1, 'ours-only': {deep: [1, 2]}, updated_at: T1}))
    const theirs = file(bead('a', {x: 2, 'theirs-only': 'kept', priority: 3, updated_at: T2}))
    expect(merge(base, ours, theirs).get('a')).toEqual({id: 'a', title: 'new title', status: 'open', x: 2, 'ours-only': {deep: [1, 2]}, 'theirs-only': 'kept', priority: 3, updated_at: T2})
  })

  it.each([
    ['open', 'closed', 'in_progress', 'closed'],
    ['open', 'in_progress', 'closed', 'closed'],
    ['in_progress', 'open', 'closed', 'closed'],
    ['closed', 'open', 'in_progress', 'open'], // reopened beats in_progress
    ['closed', 'in_progress', 'open', 'open'],
    ['open', 'in_progress', 'blocked', 'blocked'],
    ['in_progress', 'open', 'blocked', 'blocked'],
    ['open', 'closed', 'cancelled', 'closed'],
    ['open', 'deferred', 'closed', 'closed'], // closed beats any string
  ])('status: base %s, ours %s, theirs %s → %s', (b, o, t, want) => {
    const m = merge(file(bead('a', {status: b})), file(bead('a', {status: o, updated_at: T2})), file(bead('a', {status: t, updated_at: T1})))
    expect(m.get('a')!.status).toBe(want)
    // and the same with the sides swapped
    const s = merge(file(bead('a', {status: b})), file(bead('a', {status: t, updated_at: T1})), file(bead('a', {status: o, updated_at: T2})))
    expect(s.get('a')!.status).toBe(want)
  })

  it('status strings outside the order: the later updated_at', () => {
    const m = merge(file(bead('a')), file(bead('a', {status: 'deferred', updated_at: T1})), file(bead('a', {status: 'weird', updated_at: T2})))
    expect(m.get('a')!.status).toBe('weird')
  })

  it('notes: both appended, concatenated without duplicates', () => {
    const base = file(bead('a', {notes: 'first'}))
    const m = merge(base, file(bead('a', {notes: 'first\n\nfrom ours', updated_at: T1})), file(bead('a', {notes: 'first\n\nfrom theirs\n\nfrom ours', updated_at: T2})))
    expect(m.get('a')!.notes).toBe('first\n\nfrom ours\n\nfrom theirs')
    expect(mergeNotes(undefined, 'only theirs')).toBe('only theirs')
    expect(mergeNotes('same', 'same')).toBe('same')
  })

  it('labels: the union minus what either side removed', () => {
    const base = file(bead('a', {labels: ['keep', 'drop-ours', 'drop-theirs']}))
    const ours = file(bead('a', {labels: ['keep', 'drop-theirs', 'new-ours'], updated_at: T1}))
    const theirs = file(bead('a', {labels: ['new-theirs', 'keep', 'drop-ours'], updated_at: T2}))
    expect(merge(base, ours, theirs).get('a')!.labels).toEqual(['keep', 'new-ours', 'new-theirs'])
  })

  it('dependencies: the union minus removals, by target and type', () => {
    const dep = (to: string) => ({issue_id: 'a', depends_on_id: to, type: 'blocks'})
    const base = file(bead('a', {dependencies: [dep('x'), dep('y')]}))
    const ours = file(bead('a', {dependencies: [dep('x'), dep('y'), dep('o')], updated_at: T1}))
    const theirs = file(bead('a', {dependencies: [dep('y'), dep('t')], updated_at: T2}))
    expect(merge(base, ours, theirs).get('a')!.dependencies).toEqual([dep('y'), dep('o'), dep('t')])
  })

  it('other fields both changed: the side with the later updated_at, whichever side that is', () => {
    const base = file(bead('a', {priority: 2, design: 'd0'}))
    const ours = file(bead('a', {priority: 0, design: 'd1', updated_at: T2}))
    const theirs = file(bead('a', {priority: 4, design: 'd2', updated_at: T1}))
    expect(merge(base, ours, theirs).get('a')).toMatchObject({priority: 0, design: 'd1', updated_at: T2})
    expect(merge(base, theirs, ours).get('a')).toMatchObject({priority: 0, design: 'd1', updated_at: T2})
  })

  it('a claim does not survive onto a bead the other side closed', () => {
    const base = file(bead('a'))
    const claimed = bead('a', {status: 'in_progress', owner: 'helix', 'claimed-at': T2, 'claimed-pid': 7, 'claimed-machine': 'h', 'claim-token': 'tok', updated_at: T2})
    const closed = bead('a', {status: 'closed', notes: 'done', updated_at: T1})
    const got = merge(base, file(claimed), file(closed)).get('a')!
    expect(got.status).toBe('closed')
    for (const k of ['claimed-at', 'claimed-pid', 'claimed-machine', 'claim-token']) expect(got).not.toHaveProperty(k)
    expect(got.notes).toBe('done')
  })

  it('a merged line keeps the JSON text of values neither side changed (13.2)', () => {
    const base = file('{"big":12345678901234567890,"id":"a","n":1.0,"status":"open","title":"t","updated_at":"2026-01-01T00:00:00.000Z"}')
    const ours = file('{"big":12345678901234567890,"id":"a","n":1.0,"notes":"o","status":"open","title":"t","updated_at":"2026-01-02T00:00:00.000Z"}')
    const theirs = file('{"big":12345678901234567890,"id":"a","n":1.0,"priority":1,"status":"open","title":"t","updated_at":"2026-01-03T00:00:00.000Z"}')
    expect(merge(base, ours, theirs).text).toBe('{"big":12345678901234567890,"id":"a","n":1.0,"notes":"o","priority":1,"status":"open","title":"t","updated_at":"2026-01-03T00:00:00.000Z"}\n')
  })
})

describe('tracker merge: invalid sides fail, nothing guessed', () => {
  it.each([
    ['ours', 'ours:2: malformed bead'],
    ['theirs', 'theirs:2: malformed bead'],
    ['base', 'base:2: malformed bead'],
  ])('a malformed line in %s', (side, msg) => {
    const good = file(bead('a'))
    const bad = file(bead('a'), '<<<<<<< HEAD')
    const sides = {base: good, ours: file(bead('a', {priority: 1})), theirs: file(bead('a', {priority: 3})), [side]: bad}
    expect(() => mergeTracker(sides)).toThrow(HelixError)
    expect(() => mergeTracker(sides)).toThrow(msg)
  })

  it('one id twice on a side', () => {
    expect(() => mergeTracker({base: file(bead('a')), ours: file(bead('a'), bead('a', {priority: 1})), theirs: file(bead('a'))})).toThrow(/ours: bead a appears more than once/)
  })
})
