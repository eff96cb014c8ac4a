/**
 * SPEC 20.3–20.4 in the loop, with fakes: a conflict or a red land check goes back to
 * the same agent as a `resolve` call; only rounds that fail their verification or the
 * check count against --resolve-attempts; a conflict after a good round is a race.
 */
import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import type {Repair} from '../../src/loop/ports.js'
import {check, closeIt, FakeLanding, harness, lastState, opts} from './fakes.js'

const B = (id: string) => ({id, title: `title ${id}`})
const conflict = (onto = 'b1'): Repair => ({kind: 'conflict', onto, paths: ['src/a.ts', 'src/b.ts']})
const red = (tail = ['FAIL one test', '1 failed']): Repair => ({kind: 'check', onto: 'b1', rc: 1, tail, logFile: '/p/.helix/worktrees/a-1/.helix/land-check.log'})

function setup(landing: FakeLanding, resolve?: Parameters<typeof harness>[1]['resolve']) {
  return harness([B('a')], {implementation: closeIt, check: check('WAIT'), ...(resolve ? {resolve} : {})}, {landing})
}
const calls = (h: ReturnType<typeof setup>, action: string) => h.calls.filter((c) => c.action === action)

describe('resolve (SPEC 20.4) with a fake landing', () => {
  it('a conflict is resolved by the same agent in the worktree, then lands; the cycle completes', async () => {
    const landing = new FakeLanding()
    landing.repairs.set('a', [conflict()])
    const h = setup(landing)
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r.exitCode).toBe(0)
    expect(calls(h, 'implementation')).toHaveLength(1)
    const res = calls(h, 'resolve')
    expect(res).toHaveLength(1)
    expect(res[0]).toMatchObject({agent: 'codex', beadId: 'a', cwd: '/p/.helix/worktrees/a-1', env: {DDX_BEAD_DIR: '/abs/.ddx'}})
    expect(landing.events).toEqual(expect.arrayContaining(['repair a conflict', 'verify a conflict: ok', 'landed a']))
    expect(landing.events.some((e) => e.startsWith('preserve a'))).toBe(false)
    expect(h.both.some((l) => /w1 cycle 1: a CONFLICT in 2 file\(s\) → resolve \(codex\)$/.test(l))).toBe(true)
    expect(h.both.some((l) => /w1 cycle 1: resolved, landed a \(1 commit, sha-a\)$/.test(l))).toBe(true)
    expect(lastState(h).completed_cycles).toBe(1)
    expect(h.tracker.get('a').status).toBe('closed')
  })

  it('a round that fails verification counts; the next round gets the problem, and lands', async () => {
    const landing = new FakeLanding()
    landing.repairs.set('a', [conflict()])
    landing.verify.set('a', ['src/a.ts still holds a conflict marker', null])
    const h = setup(landing)
    await runLoop(h.deps, opts({workers: 2, resolveAttempts: 2}))
    expect(calls(h, 'resolve')).toHaveLength(2)
    expect(h.normal.some((l) => /a resolve not done: src\/a.ts still holds a conflict marker/.test(l))).toBe(true)
    expect(landing.events).toContain('landed a')
    expect(lastState(h).completed_cycles).toBe(1)
  })

  it('rounds exhausted: not landed, the work preserved (rebase aborted by preserve), the bead reopened', async () => {
    const landing = new FakeLanding()
    landing.repairs.set('a', [conflict()])
    landing.verify.set('a', ['HEAD is not the attempt branch', 'HEAD is not the attempt branch'])
    const h = harness([B('a')], {implementation: (c, t) => (calls(h, 'implementation').length === 1 ? closeIt(c, t) : undefined), check: check('WAIT')}, {landing})
    await runLoop(h.deps, opts({workers: 2, resolveAttempts: 2, maxCycles: 1}))
    expect(calls(h, 'resolve')).toHaveLength(2)
    expect(landing.events).toContain('preserve a (not resolved: HEAD is not the attempt branch)')
    expect(landing.events).not.toContain('landed a')
    const note = h.tracker.get('a').notes ?? ''
    expect(note).toMatch(/NOT LANDED \[[^\]]+\]: not resolved after 2 round\(s\)/)
    expect(lastState(h).cycles[0]?.outcome).toBe('NOT_LANDED')
  })

  it('a new conflict after a good round is a race: not a spent round', async () => {
    const landing = new FakeLanding()
    // first landing conflicts; the repaired candidate conflicts again (the base moved), then lands
    landing.repairs.set('a', [conflict('b1'), conflict('b2'), null])
    const h = setup(landing)
    await runLoop(h.deps, opts({workers: 2, resolveAttempts: 1}))
    expect(calls(h, 'resolve')).toHaveLength(2)
    expect(landing.events).toContain('landed a')
    // every landing allowed repair: the single round was never spent
    expect(landing.landOpts.map((o) => o.repair)).toEqual([true, true, true])
  })

  it('a land check that fails again after a resolve spends the round; its last lines go to the next attempt', async () => {
    const landing = new FakeLanding()
    landing.repairs.set('a', [red(), red(['still red'])])
    let impl = 0
    const h = harness([B('a')], {implementation: (c, t) => (++impl === 1 ? closeIt(c, t) : undefined), check: check('WAIT')}, {landing})
    await runLoop(h.deps, opts({workers: 2, resolveAttempts: 1, maxCycles: 1}))
    expect(calls(h, 'resolve')).toHaveLength(1)
    expect(h.both.some((l) => /w1 cycle 1: a land check FAILED \(rc=1, 2s\): 1 failed — log L\d+–L\d+ \(w1\)$/.test(l))).toBe(true)
    expect(landing.events, landing.events.join('\n')).toContain('preserve a (land check failed (rc=1), not resolved after 1 round(s))')
    expect(h.tracker.get('a').status).toBe('open')
    const second = calls(h, 'implementation')[1]
    expect(second?.prompt).toContain('still red')
  })

  it('--resolve-attempts 0 disables resolve: not landed at once, no resolve call', async () => {
    const landing = new FakeLanding()
    landing.repairs.set('a', [conflict()])
    const h = setup(landing)
    await runLoop(h.deps, opts({workers: 2, resolveAttempts: 0, maxCycles: 1}))
    expect(calls(h, 'resolve')).toHaveLength(0)
    expect(landing.landOpts[0]?.repair).toBe(false)
    expect(landing.events).toContain('not landed a')
  })

  it('a resolve that changes the tracker fails its verification', async () => {
    const landing = new FakeLanding()
    landing.repairs.set('a', [conflict()])
    let impl = 0
    const h = harness([B('a')], {implementation: (c, t) => (++impl === 1 ? closeIt(c, t) : undefined), check: check('WAIT'), resolve: (_c, t) => void (t.get('a').notes = 'the resolve wrote a note')}, {landing})
    await runLoop(h.deps, opts({workers: 2, resolveAttempts: 1, maxCycles: 1}))
    expect(calls(h, 'resolve')).toHaveLength(1)
    expect(h.normal.some((l) => /resolve not done: the resolve changed the tracker/.test(l))).toBe(true)
    expect(landing.events).not.toContain('landed a')
  })

  it('a resolve that finds the agent unavailable stops the run, the work preserved and the bead reopened', async () => {
    const landing = new FakeLanding()
    landing.repairs.set('a', [conflict()])
    const h = setup(landing, () => ({rc: 1, verdict: {health: {kind: 'unavailable', reason: 'not logged in'}}}))
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r.stopReason).toBe('agent_unavailable')
    expect(landing.events.some((e) => e.startsWith('preserve a (the run stopped'))).toBe(true)
    expect(h.tracker.get('a').status).toBe('open')
  })

  it("the run's budget stops a due resolve (NOT LANDED: budget); a per-bead cap does not", async () => {
    const landing = new FakeLanding()
    landing.repairs.set('a', [conflict()])
    const h = setup(landing)
    // the implementation spends the run's whole budget (10 tokens): the resolve is never dispatched
    const r = await runLoop(h.deps, opts({workers: 2, maxTokens: 10}))
    expect(r.stopReason).toBe('budget')
    expect(calls(h, 'resolve')).toHaveLength(0)
    expect(String(h.tracker.get('a').notes)).toMatch(/NOT LANDED \[[^\]]+\]: budget; work kept at refs\/helix\/preserved\/a\/1/)
    const capped = new FakeLanding()
    capped.repairs.set('a', [conflict()])
    const h2 = setup(capped)
    await runLoop(h2.deps, opts({workers: 2, maxBeadTokens: 10}))
    expect(calls(h2, 'resolve')).toHaveLength(1)
    expect(capped.events).toContain('landed a')
  })
})
