/** SPEC 15.4 / 16.6: the pasted --workers pointer `L40–L88 (w2)` and `--slot wN` (pure parsing and rendering). */
import {describe, expect, it} from 'vitest'
import {renderLogLine} from '../../src/output/log-render.js'
import {parseLinePointer, parseSlot} from '../../src/output/log-args.js'
import {HelixError} from '../../src/util/errors.js'

describe('parseLinePointer', () => {
  it('takes the plain range forms unchanged', () => {
    expect(parseLinePointer('12-340')).toEqual({from: 12, to: 340})
    expect(parseLinePointer('L12–L340')).toEqual({from: 12, to: 340})
    expect(parseLinePointer('L7')).toEqual({from: 7, to: 7})
    // every spelling of the --lines e2e (surface-small.e2e.test.ts runs only L2–L4)
    for (const spec of ['L2–L4', 'L2-L4', '2-4', '2–4']) expect(parseLinePointer(spec), spec).toEqual({from: 2, to: 4})
  })
  it('takes a slot in parentheses, and a whole pasted pointer with its file', () => {
    expect(parseLinePointer('L40–L88 (w2)')).toEqual({from: 40, to: 88, slot: 2})
    expect(parseLinePointer('L40-L88(W12)')).toEqual({from: 40, to: 88, slot: 12})
    expect(parseLinePointer('40-88 (3)')).toEqual({from: 40, to: 88, slot: 3})
    expect(parseLinePointer('log L40–L88 (w2) in /p/.helix-logs/helix-20260101-000000.log')).toEqual({from: 40, to: 88, slot: 2, file: '/p/.helix-logs/helix-20260101-000000.log'})
    expect(parseLinePointer('log L1–L9 in /tmp/a b/helix-x.log')).toEqual({from: 1, to: 9, file: '/tmp/a b/helix-x.log'})
  })
  it('refuses a bad slot or range in one line naming what was given', () => {
    expect(() => parseLinePointer('L40–L88 (x2)')).toThrow(HelixError)
    expect(() => parseLinePointer('L40–L88 (x2)')).toThrow(/invalid --lines 'L40–L88 \(x2\)': the slot is written \(wN\)/)
    expect(() => parseLinePointer('L88–L40 (w2)')).toThrow(/invalid --lines 'L88–L40 \(w2\)': the range ends before it starts/)
    expect(() => parseLinePointer('L0-L3 (w1)')).toThrow(/line numbers start at 1/)
    expect(() => parseLinePointer('(w2)')).toThrow(/invalid --lines/)
    // the exact one-line messages of a bad plain range
    for (const [spec, msg] of [
      ['4-2', "invalid --lines '4-2': the range ends before it starts"],
      ['abc', "invalid --lines 'abc': use A-B, e.g. 12-340 or L12–L340"],
      ['0-3', "invalid --lines '0-3': line numbers start at 1"],
    ]) {
      const e = (() => {
        try {
          parseLinePointer(spec)
        } catch (error) {
          return error
        }
      })()
      expect(e, spec).toBeInstanceOf(HelixError)
      expect((e as HelixError).message, spec).toBe(msg)
      expect((e as HelixError).exitCode, spec).toBe(1)
    }
  })
})

describe('parseSlot', () => {
  it('w2, W2 and 2 are slot 2; anything else is one clear error', () => {
    expect([parseSlot('w2'), parseSlot('W2'), parseSlot(' 2 ')]).toEqual([2, 2, 2])
    for (const bad of ['w0', '0', 'x', 'w', '-1', 'w1234', 'w2; rm']) expect(() => parseSlot(bad)).toThrow(/invalid --slot/)
  })
})

describe('agent lines of a --workers log name their slot in the gutter', () => {
  it('keeps the one-worker indent, puts wN in it otherwise', () => {
    expect(renderLogLine(JSON.stringify({level: 30, time: 0, msg: 'hi', stream: 'agent', dispatch: 1}))).toBe('           │ hi')
    expect(renderLogLine(JSON.stringify({level: 30, time: 0, msg: 'hi', stream: 'agent', dispatch: 1, slot: 2, bead: 'hx-b'}))).toBe('        w2 │ hi')
    expect(renderLogLine(JSON.stringify({level: 30, time: 0, msg: 'dispatch end', dispatch: 1, slot: 2, bead: 'hx-b', rc: 0}))).toMatch(/dispatch #1 end: rc=0 {2}slot=2 bead=hx-b$/)
  })
})
