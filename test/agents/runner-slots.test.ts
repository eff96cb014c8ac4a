/**
 * SPEC 15.4: with --workers > 1 the records of a dispatch carry `slot` and `bead`, so a
 * log pointer `L40–L88 (w2)` names one slot's records in the one interleaved session log;
 * with one worker (no `slot` in the request) the records stay as they were. The runner
 * also reports the agent's pid through `onSpawn` once it is spawned.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {dispatchAgent} from '../../src/agents/runner.js'
import type {DispatchRequest} from '../../src/agents/types.js'
import {openSessionLog} from '../../src/output/session-log.js'
import {renderLogLines} from '../../src/output/log-render.js'
import {readLog, stubProject, type StubEnv} from './helpers.js'

function req(p: StubEnv, action: 'check' | 'polish', log: DispatchRequest['log'], extra: Partial<DispatchRequest> = {}): DispatchRequest {
  return {
    agent: {kind: 'command', name: p.paths.command, path: p.paths.command},
    action,
    prompt: `helix ${action} action\n`,
    root: p.root,
    timeoutSec: 30,
    env: {HELIX_STUB_DIR: p.stubDir, NODE_ENV: 'production', HELIX_KILL_GRACE_MS: '500'},
    log,
    ...extra,
  }
}

describe('dispatch records name their slot and bead (SPEC 15.4)', () => {
  it('two concurrent dispatches in one log: every record of each carries its slot and bead; a slot filter picks one out', async () => {
    const p = stubProject()
    // both agents print while the other is running, so their records interleave
    p.script({check: [['print:a1', 'sleep:300', 'print:a2', 'sleep:300', 'print:a3']], polish: [['sleep:150', 'print:b1', 'sleep:300', 'print:b2']]})
    const log = openSessionLog(path.join(p.root, '.helix-logs'))
    log.event('before')
    const pids: Array<[number, number]> = []
    const [a, b] = await Promise.all([
      dispatchAgent(req(p, 'check', log, {slot: 1, beadId: 'hx-a', onSpawn: (pid) => pids.push([1, pid])})),
      dispatchAgent(req(p, 'polish', log, {slot: 2, beadId: 'hx-b', onSpawn: (pid) => pids.push([2, pid])})),
    ])
    log.close()
    expect([a.rc, b.rc]).toEqual([0, 0])
    const recs = readLog(log.path)
    const of = (d: number) => recs.filter((r) => r.dispatch === d)
    for (const [res, slot, bead] of [
      [a, 1, 'hx-a'],
      [b, 2, 'hx-b'],
    ] as const) {
      const mine = of(res.dispatch!)
      expect(mine.map((r) => r.msg)).toEqual(expect.arrayContaining(['dispatch', 'dispatch end']))
      expect(mine.every((r) => r.slot === slot && r.bead === bead)).toBe(true)
    }
    expect(of(a.dispatch!).filter((r) => r.stream === 'agent').map((r) => r.msg)).toEqual(['a1', 'a2', 'a3'])
    // the two ranges overlap: the other slot's lines sit inside each
    const lines = readFileSync(log.path, 'utf8').split('\n')
    const inRange = (r: {first: number; last: number}) => lines.slice(r.first - 1, r.last).map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(inRange(a.logRange!).some((r) => r.slot === 2)).toBe(true)

    // `helix logs --lines A-B --slot w1`: only slot 1's records of the range, numbered as in the file
    let out = ''
    const short = await renderLogLines(log.path, {from: 1, to: lines.length - 1}, (t) => ((out += t), true), {slot: 1})
    expect(short).toBeNull()
    const shown = out.trimEnd().split('\n')
    const expectedNumbers = recs.map((r, i) => [r, i + 1] as const).filter(([r]) => r.slot === 1).map(([, n]) => `L${n}`)
    expect(shown.map((l) => l.split(/\s+/, 1)[0])).toEqual(expectedNumbers)
    expect(out).toContain('w1 │ a2')
    // (not a bare 'b1': the random hex of a dispatch_id may hold it)
    expect(out).not.toContain('│ b1')
    expect(out).not.toContain('before')

    // onSpawn: once per dispatch, with the agent's pid (the group leader the stub ran as)
    expect(pids.map(([s]) => s).sort()).toEqual([1, 2])
    const calls = p.calls()
    for (const [, pid] of pids) expect(calls.map((c) => c.pid)).toContain(pid)
  })

  it('one worker (no slot): the records are exactly as before, with no slot or bead field', async () => {
    const p = stubProject()
    p.script({check: [['print:one']]})
    const log = openSessionLog(path.join(p.root, '.helix-logs'))
    const res = await dispatchAgent(req(p, 'check', log, {beadId: 'hx-a'}))
    log.close()
    const recs = readLog(log.path).filter((r) => r.dispatch === res.dispatch)
    expect(recs.length).toBeGreaterThanOrEqual(3)
    expect(recs.some((r) => 'slot' in r || 'bead' in r)).toBe(false)
  })

  it('an onSpawn that throws is logged and does not take the dispatch down', async () => {
    const p = stubProject()
    p.script({check: [['print:one']]})
    const log = openSessionLog(path.join(p.root, '.helix-logs'))
    const res = await dispatchAgent(
      req(p, 'check', log, {
        onSpawn: () => {
          throw new Error('boom')
        },
      }),
    )
    log.close()
    expect(res.rc).toBe(0)
    expect(readLog(log.path).some((r) => r.msg === 'onSpawn failed' && r.error === 'boom')).toBe(true)
  })
})
