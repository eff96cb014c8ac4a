import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import {budgetReached, foldFailureLine, planQuotaPause, SystemicDetector} from '../../src/loop/systemic.js'
import {HelixError} from '../../src/util/errors.js'
import {check, closeIt, harness, lastState, opts} from './fakes.js'

const B = (id: string, extra: Record<string, unknown> = {}) => ({id, title: `title ${id}`, ...extra})
const impls = (h: ReturnType<typeof harness>) => h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)

describe('pure health rules', () => {
  it('folds digits and hex runs', () => {
    expect(foldFailureLine('error 500: request 4f2a91cc failed')).toBe(foldFailureLine('error 502: request 88b10e2f failed'))
    expect(foldFailureLine('a 1')).not.toBe(foldFailureLine('b 1'))
  })
  it('systemic: two fast identical failures on different beads; a success or the same bead breaks the row', () => {
    const d = new SystemicDetector()
    expect(d.record({bead: 'a', kind: 'fail', line: 'boom 1', durationMs: 1000})).toBeNull()
    expect(d.record({bead: 'a', kind: 'fail', line: 'boom 2', durationMs: 1000})).toBeNull()
    expect(d.record({bead: 'b', kind: 'fail', line: 'boom 3', durationMs: 1000})).toBe('boom 3')
    const e = new SystemicDetector()
    e.record({bead: 'a', kind: 'fail', line: 'boom', durationMs: 1000})
    e.record({bead: 'b', kind: 'ok', line: null, durationMs: 0})
    expect(e.record({bead: 'c', kind: 'fail', line: 'boom', durationMs: 1000})).toBeNull()
    const f = new SystemicDetector()
    f.record({bead: 'a', kind: 'fail', line: 'boom', durationMs: 61_000})
    expect(f.record({bead: 'b', kind: 'fail', line: 'boom', durationMs: 1000})).toBeNull()
    const g = new SystemicDetector()
    g.record({bead: 'a', kind: 'timeout', line: 'timed out after 5s', durationMs: 5000})
    expect(g.record({bead: 'b', kind: 'stall', line: 'stalled: no output for 9s', durationMs: 9000})).toBe('stalled: no output for 9s')
  })
  it('quota plan: reset time, probes 15→30→60→60 min, bounded by the max wait', () => {
    const start = new Date('2026-03-01T10:00:00Z')
    const p = planQuotaPause({now: start, resetAt: '2026-03-01T11:42:00Z', pauseStart: start, probe: 0, maxWaitSec: 21600})
    expect(p).toMatchObject({kind: 'sleep', ms: 102 * 60_000})
    const beyond = planQuotaPause({now: start, resetAt: '2026-03-01T18:00:00Z', pauseStart: start, probe: 0, maxWaitSec: 21600})
    expect(beyond).toEqual({kind: 'stop', message: 'helix: quota resets at 2026-03-01T18:00:00.000Z, beyond --max-quota-wait; stopping'})
    const mins = [0, 1, 2, 3].map((probe) => (planQuotaPause({now: start, resetAt: null, pauseStart: start, probe, maxWaitSec: 21600}) as {ms: number}).ms / 60_000)
    expect(mins).toEqual([15, 30, 60, 60])
    expect(planQuotaPause({now: new Date(start.getTime() + 7000_000), resetAt: null, pauseStart: start, probe: 3, maxWaitSec: 7200}).kind).toBe('stop')
  })
  it('budgets', () => {
    expect(budgetReached({maxTokens: 100}, 99, 0)).toBeNull()
    expect(budgetReached({maxTokens: 100}, 100, 0)).toBe('helix: token budget reached (100 of 100); stopping')
    expect(budgetReached({maxCost: 1}, 0, 1.5)).toBe('helix: cost budget reached ($1.50 of $1.00); stopping')
  })
})

describe('agent unavailable (SPEC 14.2)', () => {
  it('one unavailable dispatch: exit 4, bead unclaimed, no attempt counted, no label, no note, stop_message, notify', async () => {
    const h = harness([B('a'), B('b')], {implementation: () => ({rc: 1, verdict: {health: {kind: 'unavailable', reason: 'Not logged in'}}})})
    const r = await runLoop(h.deps, opts())
    expect(r).toEqual({exitCode: 4, stopReason: 'agent_unavailable'})
    expect(h.both).toContain('helix: agent codex unavailable: Not logged in')
    expect(impls(h)).toEqual(['a'])
    const a = h.tracker.get('a')
    expect(a.status).toBe('open')
    expect(a.labels ?? []).not.toContain('blocked')
    expect(a.notes ?? '').toBe('')
    const s = lastState(h)
    expect(s.attempts.a).toBeUndefined()
    expect(s.stop_message).toBe('Not logged in')
    expect(s.stop_reason).toBe('agent_unavailable')
    expect(h.events.map((e) => e.event)).toEqual(['agent_unavailable', 'run_stopped'])
    expect(h.events[1]).toMatchObject({stop_reason: 'agent_unavailable', exit_code: 4})
  })

  it('two fast failures on two beads with the same folded line: systemic, the second is not counted', async () => {
    const h = harness([B('a'), B('b'), B('c')], {implementation: (c) => ({rc: 1, text: `starting\nERROR: quota check failed (request ${c.beadId === 'a' ? '1234' : '98765'})`})})
    const r = await runLoop(h.deps, opts())
    expect(r).toEqual({exitCode: 4, stopReason: 'agent_unavailable'})
    expect(impls(h)).toEqual(['a', 'b'])
    expect(h.both).toContain('helix: agent codex unavailable: ERROR: quota check failed (request 98765)')
    const s = lastState(h)
    expect(s.attempts).toEqual({a: 1})
    expect(h.tracker.get('b').status).toBe('open')
    expect(h.tracker.calls.filter((c) => c.startsWith('label') || c.startsWith('note'))).toEqual([])
  })

  it('different failure lines are bead failures, not systemic', async () => {
    let n = 0
    const h = harness([B('a'), B('b')], {implementation: () => ({rc: 1, text: `error ${n++ % 2 ? 'x' : 'y'}`}), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    const r = await runLoop(h.deps, opts())
    expect(r.stopReason).toBe('blocked')
    expect(lastState(h).attempts).toEqual({a: 4, b: 4})
  })

  it('a stall is a bead failure with its reason; stalls on two beads in a row are systemic', async () => {
    const one = harness([B('a')], {implementation: (c) => (c.beadId === 'a' && one.calls.length === 1 ? {rc: 137, end: {end: 'stalled', afterSec: 9}} : closeIt(c, one.tracker)), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    const r1 = await runLoop(one.deps, opts({stallTimeoutSec: 9, summary: true}))
    expect(r1.exitCode).toBe(0)
    expect(one.calls[0].stallTimeoutSec).toBe(9)
    const s1 = lastState(one)
    expect(s1.cycles[0]).toMatchObject({outcome: 'STALLED', reason: 'stalled (no output for 9s)'})
    expect(s1.attempts.a).toBe(1)
    expect(one.summary.some((l) => /cycle 1: a → STALLED \(no output for 9s\)$/.test(l))).toBe(true)
    // SPEC 22.2: a stall is not "complete"
    const agentLines = one.summaryView().filter((l) => / codex (complete|stalled) /.test(l))
    expect(agentLines[0]).toMatch(/^helix: \[[\d:]+\] codex stalled \(no output for 9s; killed\)( — log L\d+–L\d+ in \S+)?$/)
    expect(one.summaryView().some((l) => /complete \(rc=137/.test(l))).toBe(false)

    const two = harness([B('a'), B('b')], {implementation: () => ({rc: 137, end: {end: 'stalled', afterSec: 9}})})
    const r2 = await runLoop(two.deps, opts({stallTimeoutSec: 9}))
    expect(r2).toEqual({exitCode: 4, stopReason: 'agent_unavailable'})
    expect(two.both).toContain('helix: agent codex unavailable: stalled (no output for 9s)')
    expect(lastState(two).attempts).toEqual({a: 1})
  })

  it('timeouts on two beads in a row are systemic', async () => {
    const h = harness([B('a'), B('b')], {implementation: () => ({rc: 124, end: {end: 'timeout', afterSec: 5}})})
    const r = await runLoop(h.deps, opts({timeoutSec: 5}))
    expect(r.exitCode).toBe(4)
    expect(lastState(h).cycles.map((c) => c.outcome)).toEqual(['TIMEOUT', 'TIMEOUT'])
    // SPEC 22.2: not "complete", and the cycle line says why
    expect(h.both.some((l) => /\] codex timed out \(no result after 5s; killed\)/.test(l))).toBe(true)
    expect(h.both.some((l) => /codex complete/.test(l))).toBe(false)
    expect(h.summary.some((l) => /cycle 1: a → TIMEOUT \(no result after 5s\)$/.test(l))).toBe(true)
  })

  it('a command agent is named by its last path part, and a call with no output has no `log none`', async () => {
    const h = harness([B('a')], {implementation: (c) => closeIt(c, h.tracker), check: () => ({text: 'NEXT_ACTION: WAIT', logRange: null})}, {implName: '/opt/tools/bin/agent.sh'})
    await runLoop(h.deps, opts({summary: true}))
    const line = h.both.find((l) => /agent\.sh complete/.test(l))
    expect(line).toMatch(/^helix: \[[\d:]+\] agent\.sh complete \(rc=0, 1s, 10 tokens\)/)
    expect(h.both.some((l) => l.includes('/opt/tools/bin'))).toBe(false)
    const checkLine = h.both.find((l) => / check complete /.test(l))
    expect(checkLine).toMatch(/check complete \(rc=0, 1s, 10 tokens\)$/)
    expect(h.both.some((l) => l.includes('log none'))).toBe(false)
  })
})

describe('quota pause (SPEC 14.3)', () => {
  it('pauses until the reset, unclaims, counts nothing, then resumes and completes the bead', async () => {
    let first = true
    const h = harness([B('a')], {
      implementation: (c, t) => {
        if (first) {
          first = false
          return {rc: 1, verdict: {health: {kind: 'quota', resetAt: '2026-03-01T11:42:01Z', message: "You've hit your usage limit"}}}
        }
        closeIt(c, t)
      },
      check: check('WAIT'),
    })
    const r = await runLoop(h.deps, opts())
    expect(r).toEqual({exitCode: 0, stopReason: 'completed'})
    expect(h.sleeps).toEqual([102 * 60_000])
    expect(h.both.some((l) => /^helix: \[\d\d:\d\d:\d\d\] codex quota exhausted; pausing until \d\d:\d\d \(in 1h42m\)$/.test(l))).toBe(true)
    const paused = h.states.find((s) => s.phase === 'paused')
    expect(paused?.paused_until).toBe('2026-03-01T11:42:01.000Z')
    expect(paused?.pause_reason).toContain('usage limit')
    expect(h.tracker.calls).toContain('unclaim a')
    const s = lastState(h)
    expect(s.attempts.a).toBeUndefined()
    expect(s.completed_cycles).toBe(1)
    expect(s.paused_until).toBeNull()
    expect(h.events.map((e) => e.event)).toEqual(['paused', 'resumed', 'run_stopped'])
    expect(h.history[0].paused_ms).toBe(102 * 60_000)
  })

  it('a reset beyond --max-quota-wait: exit 4, stop_reason quota', async () => {
    const h = harness([B('a')], {implementation: () => ({rc: 1, verdict: {health: {kind: 'quota', resetAt: '2026-03-02T10:00:00Z', message: 'limit'}}})})
    const r = await runLoop(h.deps, opts({maxQuotaWaitSec: 3600}))
    expect(r).toEqual({exitCode: 4, stopReason: 'quota'})
    expect(h.both).toContain('helix: quota resets at 2026-03-02T10:00:00.000Z, beyond --max-quota-wait; stopping')
    expect(h.sleeps).toEqual([])
    expect(h.tracker.get('a').status).toBe('open')
    expect(lastState(h).stop_message).toContain('beyond --max-quota-wait')
  })

  it('no reset time: probes after 15, 30, 60 min, then stops at the bound', async () => {
    const h = harness([B('a')], {implementation: () => ({rc: 1, verdict: {health: {kind: 'quota', resetAt: null, message: 'limit'}}})})
    const r = await runLoop(h.deps, opts({maxQuotaWaitSec: 2 * 3600}))
    expect(r).toEqual({exitCode: 4, stopReason: 'quota'})
    expect(h.sleeps.map((ms) => ms / 60_000)).toEqual([15, 30, 60])
    expect(impls(h)).toEqual(['a', 'a', 'a', 'a'])
  })

  it('SIGTERM ends a pause at once', async () => {
    const ac = new AbortController()
    const h = harness([B('a')], {implementation: () => ({rc: 1, verdict: {health: {kind: 'quota', resetAt: null, message: 'limit'}}})}, {abortableSleep: true})
    const p = runLoop(h.deps, opts({signal: ac.signal}))
    for (let i = 0; i < 100 && h.sleeps.length === 0; i++) await new Promise((r) => setImmediate(r))
    ac.abort('SIGTERM')
    expect(await p).toEqual({exitCode: 143, stopReason: 'interrupted'})
    expect(lastState(h).phase).toBe('stopped')
  })

  it('the review agent pauses the same way, then the review runs again', async () => {
    let reviews = 0
    const h = harness([B('a')], {
      implementation: closeIt,
      review: () => (reviews++ === 0 ? {rc: 1, verdict: {health: {kind: 'quota', resetAt: '2026-03-01T10:30:00Z', message: 'limit'}}} : {text: 'REVIEW_STATUS: CLEAN'}),
      check: check('WAIT'),
    })
    const r = await runLoop(h.deps, opts({autoReview: true, reviewThreshold: 0}))
    expect(r.exitCode).toBe(0)
    expect(reviews).toBe(2)
    expect(lastState(h).completed_cycles).toBe(1)
  })
})

describe('budgets and the tracker (SPEC 14.6, 13.4)', () => {
  it('token budget: no new dispatch once reached; exit 0, stop_reason budget', async () => {
    const h = harness([B('a'), B('b'), B('c')], {implementation: closeIt})
    const r = await runLoop(h.deps, opts({maxTokens: 15}))
    expect(r).toEqual({exitCode: 0, stopReason: 'budget'})
    expect(impls(h)).toEqual(['a', 'b'])
    expect(h.both).toContain('helix: token budget reached (20 of 15); stopping')
  })

  it('a tracker that lost most beads during the attempt: exit 1, nothing written to it', async () => {
    const h = harness([B('a'), B('b'), B('c')], {implementation: (_c, t) => void (t.beads = t.beads.filter((b) => b.id === 'a'))})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(h.both).toContain('helix: the tracker lost 2 of 3 beads during the attempt on a; stopping without writing (restore it, e.g. from git)')
    expect(h.tracker.calls).toEqual(['claim a'])
  })

  it('a malformed tracker stops before anything is written: no log, no run-state', async () => {
    const h = harness([B('a')], {})
    h.deps.tracker.read = async () => {
      throw new HelixError('.ddx/beads.jsonl:3: not JSON', 1)
    }
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(h.both).toEqual(['helix: .ddx/beads.jsonl:3: not JSON'])
    expect(h.states).toEqual([])
    expect(h.logOpened).toBe(false)
    expect(h.history).toEqual([])
  })
})

describe('lines and history (SPEC 16.3, 16.5)', () => {
  it('failed cycles say why; 0 tokens left out when none were reported; actions named', async () => {
    let n = 0
    const h = harness([B('a'), B('b')], {
      implementation: (c, t) => {
        n++
        if (n === 1) return {rc: 1, text: 'working\nTypeError: x is undefined\n'}
        if (n === 2) return {rc: 0, tokens: 0, verdict: {tokensReported: false}}
        closeIt(c, t)
      },
      check: check('WAIT'),
    }, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    await runLoop(h.deps, opts({summary: true}))
    const v = h.summaryView()
    expect(v.some((l) => /cycle 1: a → FAILED \(rc=1: TypeError: x is undefined\)$/.test(l))).toBe(true)
    expect(v.some((l) => /cycle 2: a → NOT COMPLETED \(bead still open\)$/.test(l))).toBe(true)
    expect(v.some((l) => /codex complete \(rc=0, 1s\) — log L/.test(l))).toBe(true)
    expect(v.some((l) => /codex check complete \(rc=0, 1s, 10 tokens\) — log L\d+–L\d+ in /.test(l))).toBe(true)
  })

  it('reached max cycles is not printed when the queue drained anyway', async () => {
    const h = harness([B('a')], {implementation: closeIt})
    const r = await runLoop(h.deps, opts({maxCycles: 1}))
    expect(r.stopReason).toBe('max_cycles')
    expect(h.both.some((l) => l.includes('reached max cycles'))).toBe(false)
  })

  it('appends one run history record with cycles, flags and the stop', async () => {
    const h = harness([B('a')], {implementation: (c, t) => (closeIt(c, t), {verdict: {costUsd: 0.25}}), check: check('WAIT')}, {commits: ['c1', 'c2']})
    await runLoop(h.deps, opts({flags: {'max-cycles': 0}}))
    expect(h.history).toHaveLength(1)
    const rec = h.history[0]
    expect(rec).toMatchObject({v: 1, workers: 1, attempted: 1, completed: 1, tokens: 20, cost_usd: 0.25, stop_reason: 'completed', exit_code: 0, flags: {'max-cycles': 0}})
    expect(rec.cycles).toMatchObject([{n: 1, slot: 1, bead: 'a', title: 'title a', outcome: 'COMPLETE', cost_usd: 0.25, commits: ['c1', 'c2']}])
    expect(lastState(h).total_cost_usd).toBe(0.25)
  })
})

describe('progress in run-state (SPEC 16.4) and notify events', () => {
  it('last_output of the in-flight agent, written at most about once a second on the clock port; workers[] and max_cycles', async () => {
    const lines = Array.from({length: 200}, (_, i) => `step ${i}\u001b[31m`)
    // 200 lines 10 ms apart on the fake clock: 2 s of output, so two output writes per agent, not 200 (and no real timer)
    const h = harness([B('a'), B('b')], {implementation: closeIt, check: check('WAIT')}, {outputLines: lines, outputStepMs: 10})
    await runLoop(h.deps, opts({maxCycles: 3, timeoutSec: 60}))
    const during = h.states.filter((s) => s.last_output)
    expect(during.filter((s) => s.current_bead === 'a')).toHaveLength(2)
    expect(during.filter((s) => s.current_bead === 'b')).toHaveLength(2)
    expect(during[during.length - 1]).toMatchObject({current_bead: 'b', last_output: 'step 199?[31m'})
    const busy = h.states.find((s) => (s.workers ?? []).length === 1)
    expect(busy?.workers?.[0]).toMatchObject({slot: 1, bead: 'a', title: 'title a', attempt: 1, worktree: null, branch: null, timeout_s: 60})
    expect(lastState(h)).toMatchObject({max_cycles: 3, workers: [], last_output: null})
  })

  it('bead_blocked is sent when a bead is blocked; a failing notifier never stops the run', async () => {
    const h = harness([B('a')], {implementation: () => ({rc: 1, text: 'no'}), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    const sent: string[] = []
    h.deps.notify = {
      async send(e) {
        sent.push(e.event)
        throw new Error('notifier down')
      },
    }
    const r = await runLoop(h.deps, opts())
    expect(r).toEqual({exitCode: 0, stopReason: 'blocked'})
    expect(sent).toEqual(['bead_blocked', 'run_stopped'])
    expect(h.log.events).toContain('notify failed')
  })

  it('cost budget', async () => {
    const h = harness([B('a'), B('b')], {implementation: (c, t) => (closeIt(c, t), {verdict: {costUsd: 0.6}})})
    const r = await runLoop(h.deps, opts({maxCost: 1}))
    expect(r).toEqual({exitCode: 0, stopReason: 'budget'})
    expect(h.both).toContain('helix: cost budget reached ($1.20 of $1.00); stopping')
  })
})

describe('tracker reads (issue 11: once per decision point)', () => {
  it('a completed cycle reads the tracker three times: selection, revalidation before the claim, the re-read after the agent', async () => {
    const h = harness([B('a'), B('b'), B('c')], {implementation: closeIt, check: check('WAIT')})
    await runLoop(h.deps, opts())
    // 1 at start + 3 per cycle + 1 selection that finds the queue empty
    expect(h.tracker.reads).toBe(1 + 3 * 3 + 1)
  })
})
