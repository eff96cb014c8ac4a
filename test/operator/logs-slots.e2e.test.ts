/**
 * `helix logs --lines A-B` with a slot (SPEC 15.4, 16.6): a --workers session log is one
 * file whose dispatch records carry `slot` and `bead`; `--slot w2` or the pasted pointer
 * `L2–L9 (w2)` prints only that slot's records of the range, with their file line numbers.
 */
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {openSessionLog} from '../../src/output/session-log.js'
import {helix, project} from './helpers.js'

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

describe('helix logs --lines with a slot', () => {
  it("the pasted pointer 'L3–L10 (w2)' prints only w2's records, numbered as in the file", () => {
    const root = project()
    const file = twoSlotLog(root)
    const r = helix(root, ['logs', '--lines', 'L3–L10 (w2)', file])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(numbers(r.stdout)).toEqual(['L3', 'L5', 'L7', 'L9', 'L10'])
    expect(r.stdout).toContain('w2 │ b three')
    expect(r.stdout).not.toMatch(/a one|a two|run start/)
    // --slot w2 and --slot 2 say the same
    expect(helix(root, ['logs', '--lines', 'L3-L10', '--slot', 'w2', file]).stdout).toBe(r.stdout)
    expect(helix(root, ['logs', '--lines', '3-10', '--slot', '2', path.basename(file)]).stdout).toBe(r.stdout)
  })

  it('a whole pasted summary pointer names its file; no FILE needed', () => {
    const root = project()
    const file = twoSlotLog(root)
    const r = helix(root, ['logs', '--lines', `log L1–L8 (w1) in ${file}`])
    expect(r.code).toBe(0)
    expect(numbers(r.stdout)).toEqual(['L2', 'L4', 'L6', 'L8'])
  })

  it('without a slot the range is printed whole, exactly as with one worker', () => {
    const root = project()
    const file = twoSlotLog(root)
    const r = helix(root, ['logs', '--lines', 'L4-L7', file])
    expect(r.code).toBe(0)
    expect(r.stdout.trimEnd().split('\n')).toEqual(['L4          w1 │ a one', 'L5          w2 │ b one', 'L6          w1 │ a two', 'L7          w2 │ b two'])
  })

  it('--slot alone filters the whole log; a bad or contradicting slot is one line, exit 1', () => {
    const root = project()
    const file = twoSlotLog(root)
    const all = helix(root, ['logs', '--slot', 'w1', file])
    expect(all.code).toBe(0)
    expect(all.stdout).toMatch(/a one[\s\S]*a two/)
    expect(all.stdout).not.toMatch(/b one|run start/)
    const bad = helix(root, ['logs', '--lines', 'L1-L3', '--slot', 'wx', file])
    expect([bad.code, bad.stdout, bad.stderr]).toEqual([1, '', "helix: invalid --slot 'wx': use wN or N, e.g. w2\n"])
    const clash = helix(root, ['logs', '--lines', 'L1-L3 (w1)', '--slot', 'w2', file])
    expect([clash.code, clash.stdout, clash.stderr]).toEqual([1, '', "helix: --slot w2 and the pointer's (w1) differ; give one\n"])
  })
})
