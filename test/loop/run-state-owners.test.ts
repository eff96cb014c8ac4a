import {describe, expect, it, vi} from 'vitest'
import {BUILDS_BEFORE_BREAKER, START, alignedSinceBuild, backfilledSinceBuild, breakerDue, nextDrain, passesExhausted, spins, type DrainEvent, type DrainState} from '../../src/loop/drain-state.js'
import {RunLedger} from '../../src/loop/ledger.js'
import {runLoop} from '../../src/loop/orchestrator.js'
import {HEALTHY, holdsDispatch, nextQuota, windowOf} from '../../src/loop/quota-state.js'
import {FakeLanding, closeIt, harness, opts} from './fakes.js'

const B = (id: string) => ({id, title: `title ${id}`})
const tick = () => new Promise((r) => setTimeout(r, 5))
const until = async (cond: () => boolean) => {
  for (let i = 0; i < 2000 && !cond(); i++) await tick()
  if (!cond()) throw new Error('condition never held')
}

function drainAfter(events: DrainEvent[]): DrainState {
  return events.reduce(nextDrain, START)
}

describe('drain state (pure transitions)', () => {
  it('a claim resets every "since the last build" count; BUILDs trip the breaker; passes are bounded', () => {
    let s = drainAfter([{kind: 'build'}])
    expect(breakerDue(s)).toBe(false)
    s = nextDrain(s, {kind: 'build'})
    expect(BUILDS_BEFORE_BREAKER).toBe(2)
    expect(breakerDue(s)).toBe(true)
    expect(breakerDue(nextDrain(s, {kind: 'breaker'}))).toBe(false)
    s = drainAfter([{kind: 'pass'}, {kind: 'pass'}, {kind: 'aligned'}, {kind: 'backfilled'}, {kind: 'spin'}])
    expect(passesExhausted(s)).toBe(false)
    expect(passesExhausted(nextDrain(s, {kind: 'pass'}))).toBe(true)
    expect([alignedSinceBuild(s), backfilledSinceBuild(s), spins(s)]).toEqual([true, true, 1])
    const after = nextDrain(s, {kind: 'claimed'})
    expect(after).toEqual({kind: 'working'})
    expect([alignedSinceBuild(after), backfilledSinceBuild(after), spins(after), passesExhausted(after)]).toEqual([false, false, 0, false])
  })

  it('transitions never mutate the state they are given', () => {
    const s = drainAfter([{kind: 'pass'}])
    const frozen = structuredClone(s)
    nextDrain(s, {kind: 'pass'})
    nextDrain(s, {kind: 'claimed'})
    expect(s).toEqual(frozen)
  })
})

describe('quota pause state (pure transitions)', () => {
  const t0 = new Date('2026-03-01T10:00:00Z')
  const t1 = new Date('2026-03-01T10:15:00Z')
  it('a quota answer holds dispatch; the sleep counts a probe without a reset; resume probes; a healthy answer ends the window', () => {
    let s = nextQuota(HEALTHY, {kind: 'quota', now: t0})
    expect(holdsDispatch(s)).toBe(true)
    s = nextQuota(s, {kind: 'sleep', until: t1, probed: true})
    expect(s).toEqual({kind: 'paused', start: t0, probe: 1, until: t1})
    // another slot answering normally mid-pause does not end the pause
    expect(nextQuota(s, {kind: 'ok'})).toBe(s)
    s = nextQuota(s, {kind: 'resume'})
    expect(holdsDispatch(s)).toBe(false)
    // the probe answers quota again: the same window, probes kept (SPEC 14.3 bounds the whole pause)
    s = nextQuota(s, {kind: 'quota', now: t1})
    expect(windowOf(s, t1)).toEqual({start: t0, probe: 1})
    s = nextQuota(nextQuota(s, {kind: 'resume'}), {kind: 'ok'})
    expect(s).toEqual(HEALTHY)
    expect(windowOf(s, t1)).toEqual({start: t1, probe: 0})
  })
})

describe('the run ledger: named operations, one slot never edits another', () => {
  function ledger() {
    const h = harness([], {})
    const l = new RunLedger(h.deps)
    l.begin(null, {})
    return {l, h}
  }

  it("a slot's end of implementation or attempt clears only its own current bead", () => {
    const {l} = ledger()
    l.beginAttempt(1, 'a', new Date())
    l.beginAttempt(2, 'b', new Date())
    l.implementationDone(1)
    l.endAttempt(1)
    expect(l.state.current_bead).toBe('b')
    l.implementationDone(2)
    expect(l.state.current_bead).toBeNull()
  })

  it('an output line followed by silence is written once its second is up, so status shows it', async () => {
    vi.useFakeTimers({toFake: ['setTimeout', 'clearTimeout']})
    try {
      const {l, h} = ledger()
      await l.save('implementing')
      // within the second after a write: throttled, not written yet
      l.output(1, 'step one')
      await Promise.resolve()
      expect(h.states.at(-1)?.last_output ?? null).toBeNull()
      // the agent now works silently: the line is written anyway, once
      await vi.advanceTimersByTimeAsync(1000)
      expect(h.states.at(-1)?.last_output).toBe('step one')
      const writes = h.states.length
      await vi.advanceTimersByTimeAsync(5000)
      expect(h.states.length).toBe(writes)
    } finally {
      vi.useRealTimers()
    }
  })

  it('a recorded cycle changes only through amendCycle (the caller keeps no live reference)', () => {
    const {l} = ledger()
    const rec = {n: 1, bead: 'a', outcome: 'COMPLETE' as const, started_at: '', ended_at: '', duration_ms: 0, tokens: 0, rc: 0, commits: [] as string[]}
    l.recordCycle(rec)
    rec.outcome = 'FAILED' as never
    rec.commits.push('x')
    expect(l.state.cycles[0]).toMatchObject({outcome: 'COMPLETE', commits: []})
    l.amendCycle(1, {outcome: 'NOT_LANDED', reason: 'conflict', commits: ['c1']})
    expect(l.state.cycles[0]).toMatchObject({outcome: 'NOT_LANDED', reason: 'conflict', commits: ['c1']})
  })

  it('attempted counts dispatches, not claims', () => {
    const {l} = ledger()
    expect(l.beginAttempt(1, 'a', new Date())).toBe(1)
    expect(l.state.attempted_cycles).toBe(0)
    l.dispatched()
    expect(l.state.attempted_cycles).toBe(1)
  })
})

describe('--workers: one slot never clears the record of another (SPEC 18.5)', () => {
  it("slot 1's gate and landing leave slot 2's current bead in run-state", async () => {
    const landing = new FakeLanding()
    let bStarted = false
    const h = harness(
      [B('a'), B('b')],
      {
        implementation: async (c, t) => {
          if (c.beadId === 'a') await until(() => bStarted)
          else {
            bStarted = true
            await until(() => landing.events.includes('landed a'))
          }
          closeIt(c, t)
        },
      },
      {landing},
    )
    const r = await runLoop(h.deps, opts({workers: 2, maxCycles: 2}))
    expect(r.exitCode).toBe(0)
    // the writes after slot 1 ended while slot 2 still ran
    const onlyB = h.states.filter((s) => (s.workers ?? []).length === 1 && s.workers?.[0]?.bead === 'b')
    expect(onlyB.length).toBeGreaterThan(0)
    for (const s of onlyB) expect(s.current_bead).toBe('b')
  })
})
