import {describe, expect, it} from 'vitest'
import {beadOverBudget} from '../../src/loop/bead-budget.js'
import {parseRunLimits} from '../../src/cli/run-limits.js'
import {runLoop} from '../../src/loop/orchestrator.js'
import {check, harness, lastState, opts} from './fakes.js'

const B = (id: string, extra: Record<string, unknown> = {}) => ({id, title: `title ${id}`, ...extra})

describe('per-bead budgets (SPEC 14.6)', () => {
  it('pure: reached at the cap, tokens or cost', () => {
    expect(beadOverBudget({tokens: 999, costUsd: 0}, {maxBeadTokens: 1000})).toBeNull()
    expect(beadOverBudget({tokens: 1200, costUsd: 0}, {maxBeadTokens: 1000})).toBe('1200 of 1000 tokens')
    expect(beadOverBudget({tokens: 0, costUsd: 1.5}, {maxBeadCost: 1})).toBe('$1.50 of $1.00')
    expect(beadOverBudget({tokens: 10 ** 9, costUsd: 99}, {})).toBeNull()
  })

  it('600 tokens per failed attempt against a cap of 1000: blocked after the second attempt, BUDGET note, blocker listed', async () => {
    const h = harness([B('a')], {implementation: () => ({rc: 1, text: 'broken', tokens: 600}), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    const r = await runLoop(h.deps, opts({maxBeadTokens: 1000}))
    expect(r).toEqual({exitCode: 0, stopReason: 'blocked'})
    expect(h.calls.filter((c) => c.action === 'implementation')).toHaveLength(2)
    const a = h.tracker.get('a')
    expect(a['helix-tokens']).toBe(1200)
    expect(a.labels).toContain('blocked')
    expect(a.notes).toMatch(/^BUDGET \[[^\]]+\]: 1200 of 1000 tokens$/m)
    expect(h.both).toContain('helix:   a — bead budget reached: 1200 of 1000 tokens')
    expect(lastState(h).skipped).toEqual([{id: 'a', reason: 'bead budget reached: 1200 of 1000 tokens', attempts: 2}])
    expect(h.events.map((e) => e.event)).toContain('bead_blocked')
  })

  it('a bead that already spent its cap in earlier runs is never dispatched; other beads run', async () => {
    const h = harness([B('a', {'helix-tokens': 1000}), B('b')], {implementation: (c, t) => void (t.get(c.beadId as string).status = 'closed'), check: check('WAIT')})
    await runLoop(h.deps, opts({maxBeadTokens: 1000}))
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['b'])
    expect(h.tracker.calls).not.toContain('claim a')
    expect(h.tracker.get('a').labels).toContain('blocked')
    // b's spend is kept on b
    expect(h.tracker.get('b')['helix-tokens']).toBe(10)
  })

  it('an attempt in flight is not stopped for it: a completing attempt over its cap still completes', async () => {
    const h = harness([B('a')], {implementation: (c, t) => ((t.get('a').status = 'closed'), {tokens: 5000}), check: check('WAIT')})
    const r = await runLoop(h.deps, opts({maxBeadTokens: 1000}))
    expect(r.stopReason).toBe('completed')
    expect(lastState(h).completed_cycles).toBe(1)
    expect(h.tracker.get('a').labels ?? []).not.toContain('blocked')
  })

  it('flags and environment: --max-bead-tokens / --max-bead-cost, HELIX_MAX_BEAD_TOKENS / HELIX_MAX_BEAD_COST; bad values name the flag', () => {
    expect(parseRunLimits({'max-bead-tokens': '1000', 'max-bead-cost': '2.5'}, {})).toMatchObject({maxBeadTokens: 1000, maxBeadCost: 2.5})
    expect(parseRunLimits({}, {HELIX_MAX_BEAD_TOKENS: '7', HELIX_MAX_BEAD_COST: '1'})).toMatchObject({maxBeadTokens: 7, maxBeadCost: 1})
    expect(() => parseRunLimits({'max-bead-tokens': '-1'}, {})).toThrow(/invalid --max-bead-tokens '-1'/)
    expect(() => parseRunLimits({}, {HELIX_MAX_BEAD_COST: 'lots'})).toThrow(/invalid HELIX_MAX_BEAD_COST 'lots'/)
  })
})
