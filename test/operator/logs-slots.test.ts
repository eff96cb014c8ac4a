/**
 * SPEC 15.4 / 16.6: the pasted --workers pointer `L40–L88 (w2)` and `--slot wN` (pure
 * parsing and rendering), and `helix logs --lines A-B` with a slot: a --workers session
 * log is one file whose dispatch records carry `slot` and `bead`; `--slot w2` or the
 * pasted pointer `L2–L9 (w2)` prints only that slot's records of the range, with their
 * file line numbers.
 */
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {openSessionLog} from '../../src/output/session-log.js'
import {helixInProcess as helix} from '../support/in-process.js'
import {project} from './helpers.js'
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

/** a two-slot log: L1 run start, then interleaved records of w1 (hx-a) and w2 (hx-b) */
function twoSlotLog(root: string): string {
  const log = openSessionLog(path.join(root, '.helix-logs'), new Date(2026, 10, 22, 4, 0, 0))
  const w1 = {dispatch: 1, slot: 1, bead: 'hx-a'}
  const w2 = {dispatch: 2, slot: 2, bead: 'hx-b'}
  log.event('run start', {workers: 2}) // L1
  log.event('dispatch', {...w1, action: 'implementation', agent: 'codex'}) // L2
  log.event('dispatch', {...w2, action: 'implementation', agent: 'codex'}) // L3
  log.agentLine('a one', w1) // L4
  log.agentLine('b one', w2) // L5
  log.agentLine('a two', w1) // L6
  log.agentLine('b two', w2) // L7
  log.event('dispatch end', {...w1, rc: 0, tokens: 5, duration_ms: 1000, timed_out: false}) // L8
  log.agentLine('b three', w2) // L9
  log.event('dispatch end', {...w2, rc: 0, tokens: 7, duration_ms: 2000, timed_out: false}) // L10
  log.close()
  return log.path
}

const numbers = (out: string) => out.trimEnd().split('\n').map((l) => l.split(/\s+/, 1)[0])

// `helix logs` itself, in-process (test/support/in-process.ts)
describe('helix logs --lines with a slot', () => {
  it("the pasted pointer 'L3–L10 (w2)' prints only w2's records, numbered as in the file", async () => {
    const root = project()
    const file = twoSlotLog(root)
    const r = await helix(root, ['logs', '--lines', 'L3–L10 (w2)', file])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(numbers(r.stdout)).toEqual(['L3', 'L5', 'L7', 'L9', 'L10'])
    expect(r.stdout).toContain('w2 │ b three')
    expect(r.stdout).not.toMatch(/a one|a two|run start/)
    // --slot w2 and --slot 2 say the same
    expect((await helix(root, ['logs', '--lines', 'L3-L10', '--slot', 'w2', file])).stdout).toBe(r.stdout)
    expect((await helix(root, ['logs', '--lines', '3-10', '--slot', '2', path.basename(file)])).stdout).toBe(r.stdout)
  })

  it('a whole pasted summary pointer names its file; no FILE needed', async () => {
    const root = project()
    const file = twoSlotLog(root)
    const r = await helix(root, ['logs', '--lines', `log L1–L8 (w1) in ${file}`])
    expect(r.code).toBe(0)
    expect(numbers(r.stdout)).toEqual(['L2', 'L4', 'L6', 'L8'])
  })

  it('without a slot the range is printed whole, exactly as with one worker', async () => {
    const root = project()
    const file = twoSlotLog(root)
    const r = await helix(root, ['logs', '--lines', 'L4-L7', file])
    expect(r.code).toBe(0)
    expect(r.stdout.trimEnd().split('\n')).toEqual(['L4          w1 │ a one', 'L5          w2 │ b one', 'L6          w1 │ a two', 'L7          w2 │ b two'])
  })

  it('--slot alone filters the whole log; a bad or contradicting slot is one line, exit 1', async () => {
    const root = project()
    const file = twoSlotLog(root)
    const all = await helix(root, ['logs', '--slot', 'w1', file])
    expect(all.code).toBe(0)
    expect(all.stdout).toMatch(/a one[\s\S]*a two/)
    expect(all.stdout).not.toMatch(/b one|run start/)
    const bad = await helix(root, ['logs', '--lines', 'L1-L3', '--slot', 'wx', file])
    expect([bad.code, bad.stdout, bad.stderr]).toEqual([1, '', "helix: invalid --slot 'wx': use wN or N, e.g. w2\n"])
    const clash = await helix(root, ['logs', '--lines', 'L1-L3 (w1)', '--slot', 'w2', file])
    expect([clash.code, clash.stdout, clash.stderr]).toEqual([1, '', "helix: --slot w2 and the pointer's (w1) differ; give one\n"])
  })
})
