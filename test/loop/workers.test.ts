import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import {decideDrain} from '../../src/loop/scheduler.js'
import {HelixError} from '../../src/util/errors.js'
import {barrier, latch, settled} from '../support/latch.js'
import {check, closeIt, FakeLanding, harness, lastState, opts, type AgentCall} from './fakes.js'

const B = (id: string, extra: Record<string, unknown> = {}) => ({id, title: `title ${id}`, ...extra})
describe('decideDrain (pure)', () => {
  const base = {target: false, freeSlots: 2, busySlots: 0, holding: false, waiting: [], excluded: 0, idleSpins: 0, alignDue: false}
  it('starts when a slot is free and a target exists, unless holding', () => {
    expect(decideDrain({...base, target: true})).toEqual({kind: 'start'})
    expect(decideDrain({...base, target: true, holding: true, busySlots: 1})).toEqual({kind: 'wait'})
  })
  it('drain, alignment and backoff waits only when every slot is idle', () => {
    expect(decideDrain({...base, busySlots: 1, freeSlots: 1})).toEqual({kind: 'wait'})
    expect(decideDrain({...base, busySlots: 1, alignDue: true, waiting: [{until: 'x'}]})).toEqual({kind: 'wait'})
    expect(decideDrain({...base, alignDue: true})).toEqual({kind: 'align'})
    expect(decideDrain({...base, waiting: [{until: 'x'}]})).toEqual({kind: 'backoff', until: 'x', waiting: [{until: 'x'}]})
    expect(decideDrain({...base, excluded: 1})).toEqual({kind: 'retry'})
    expect(decideDrain({...base, excluded: 1, idleSpins: 3})).toEqual({kind: 'drain'})
    expect(decideDrain(base)).toEqual({kind: 'drain'})
  })
})

describe('--workers N with a fake landing', () => {
  it('runs attempts concurrently in worktrees, lines name the slot, cycles land with their commits', async () => {
    const landing = new FakeLanding()
    const together = barrier(2)
    const impl = async (c: AgentCall, t: Parameters<typeof closeIt>[1]) => {
      // both attempts must be in flight at once
      await together()
      closeIt(c, t)
    }
    const h = harness([B('a'), B('b')], {implementation: impl, check: check('WAIT')}, {landing})
    const r = await runLoop(h.deps, opts({workers: 2, summary: true}))
    expect(r).toEqual({exitCode: 0, stopReason: 'completed'})
    const calls = h.calls.filter((c) => c.action === 'implementation')
    expect(calls.map((c) => [c.beadId, c.cwd, c.env?.DDX_BEAD_DIR, c.slot])).toEqual([
      ['a', '/p/.helix/worktrees/a-1', '/abs/.ddx', 1],
      ['b', '/p/.helix/worktrees/b-1', '/abs/.ddx', 2],
    ])
    expect(h.summary.some((l) => /^helix: \[[\d:]+\] w2 cycle 2: b \(1 ready\) — title b$/.test(l))).toBe(true)
    expect(h.both.some((l) => /w1 cycle 1: a → COMPLETE/.test(l))).toBe(true)
    const s = lastState(h)
    expect(s.completed_cycles).toBe(2)
    expect(s.cycles.map((c) => [c.bead, c.slot, c.commits])).toEqual(
      expect.arrayContaining([
        ['a', 1, ['c-a']],
        ['b', 2, ['c-b']],
      ]),
    )
    expect(h.states.some((st) => (st.workers ?? []).length === 2)).toBe(true)
    expect(s.workers).toEqual([])
    expect(landing.events).toContain('excludes')
  })

  it('the first attempts start startSpacingMs apart (two pauses for three slots), then run together; a slot freed later starts at once', async () => {
    const landing = new FakeLanding()
    // the first three attempts must all be in flight at once: the pauses only space their starts
    const together = barrier(3)
    const impl = async (c: AgentCall, t: Parameters<typeof closeIt>[1]) => {
      if (c.beadId !== 'd') await together()
      closeIt(c, t)
    }
    const h = harness([B('a'), B('b'), B('c'), B('d')], {implementation: impl, check: check('WAIT')}, {landing})
    const r = await runLoop(h.deps, opts({workers: 3, startSpacingMs: 300}))
    expect(r).toEqual({exitCode: 0, stopReason: 'completed'})
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['a', 'b', 'c', 'd'])
    expect(h.sleeps).toEqual([300, 300])
    expect(lastState(h).completed_cycles).toBe(4)
  })

  it('a dependent bead waits until its dependency has landed, not just closed', async () => {
    const landing = new FakeLanding()
    // a is closed at once but lands only after c's attempt has ended and the loop went as far
    // as it could: a slot was free and a closed (not landed) all that time
    const cDone = latch()
    landing.hold.set('a', cDone.wait().then(settled))
    const order: string[] = []
    const h = harness(
      [B('a', {priority: 0}), B('b', {priority: 0, dependencies: [{issue_id: 'b', depends_on_id: 'a', type: 'blocks'}]}), B('c', {priority: 1})],
      {
        implementation: async (c, t) => {
          order.push(`start ${c.beadId}`)
          closeIt(c, t)
          if (c.beadId === 'c') cDone.open()
        },
        check: check('WAIT'),
      },
      {landing},
    )
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r.exitCode).toBe(0)
    const events = [...landing.events]
    const landedA = events.indexOf('landed a')
    const prepB = events.indexOf('prepare b w1') >= 0 ? events.indexOf('prepare b w1') : events.indexOf('prepare b w2')
    expect(landedA).toBeGreaterThanOrEqual(0)
    expect(prepB).toBeGreaterThan(landedA)
    expect(order).toEqual(['start a', 'start c', 'start b'])
  })

  it('--max-cycles counts completed cycles across slots; no more attempts start than cycles remain; in-flight ones land', async () => {
    const landing = new FakeLanding()
    const together = barrier(2)
    const h = harness(
      [B('a'), B('b'), B('c'), B('d'), B('e')],
      {
        implementation: async (c, t) => {
          await together()
          // a fails: its slot takes c; b and c complete the two cycles
          if (c.beadId === 'a') return {rc: 1, text: 'nope'}
          // b completes the first cycle, c the second
          if (c.beadId === 'c') await landing.log.seen('landed b')
          closeIt(c, t)
        },
      },
      {landing},
    )
    const r = await runLoop(h.deps, opts({workers: 3, maxCycles: 2}))
    expect(r.stopReason).toBe('max_cycles')
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['a', 'b', 'c'])
    expect(landing.events).toContain('landed c')
    expect(lastState(h).completed_cycles).toBe(2)
    expect(h.both).toContain('helix: reached max cycles (2)')
  })

  it('no `reached max cycles` when the last cycle drained the queue and no slot is busy (SPEC 16.3)', async () => {
    const landing = new FakeLanding()
    const together = barrier(2)
    const impl = async (c: AgentCall, t: Parameters<typeof closeIt>[1]) => {
      await together()
      closeIt(c, t)
    }
    const h = harness([B('a'), B('b')], {implementation: impl, check: check('WAIT')}, {landing})
    const r = await runLoop(h.deps, opts({workers: 2, maxCycles: 2}))
    expect(r.stopReason).toBe('max_cycles')
    expect(lastState(h).completed_cycles).toBe(2)
    expect(h.both.some((l) => l.includes('reached max cycles'))).toBe(false)
  })

  it('not landed: reopened with a NOT LANDED note naming the kept work, counted as a failed attempt with backoff', async () => {
    const landing = new FakeLanding()
    landing.fail.set('a', 'conflict in a.ts')
    const h = harness([B('a')], {implementation: closeIt, check: check('WAIT')}, {landing})
    const r = await runLoop(h.deps, opts({workers: 2, summary: true}))
    expect(r.exitCode).toBe(0)
    const a = h.tracker.get('a')
    expect(a.notes).toMatch(/^NOT LANDED \[[^\]]+\]: conflict in a\.ts; work kept at refs\/helix\/preserved\/a\/1$/m)
    expect(a.status).toBe('closed')
    const s = lastState(h)
    expect(s.cycles.map((c) => c.outcome)).toEqual(['NOT_LANDED', 'COMPLETE'])
    expect(s.attempts.a).toBe(1)
    expect(h.sleeps).toEqual([5000])
    expect(h.summary.some((l) => /w1 cycle 1: a → NOT LANDED \(conflict in a\.ts\)$/.test(l))).toBe(true)
    const prompts = h.calls.filter((c) => c.action === 'implementation')
    expect(prompts[0].prompt).not.toContain('refs/helix/preserved')
    expect(prompts[1].prompt).toContain('refs/helix/preserved/a/1')
  })

  it("the post-implementation review runs in the attempt's worktree with the shared tracker (SPEC 15.1, 15.2)", async () => {
    const landing = new FakeLanding()
    const h = harness([B('a')], {implementation: closeIt, review: () => ({text: 'REVIEW_STATUS: CLEAN\nISSUES_COUNT: 0\nFINDINGS_FILED: 0\n'}), check: check('WAIT')}, {landing})
    await runLoop(h.deps, opts({workers: 2, autoReview: true, reviewThreshold: 0}))
    const rv = h.calls.filter((c) => c.action === 'review')
    expect(rv.map((c) => [c.beadId, c.cwd, c.env?.DDX_BEAD_DIR])).toEqual([['a', '/p/.helix/worktrees/a-1', '/abs/.ddx']])
    expect(landing.events.indexOf('land a')).toBeGreaterThan(-1)
  })

  it("the acceptance gate runs in the attempt's worktree (SPEC 15.1)", async () => {
    const landing = new FakeLanding()
    const h = harness([B('a')], {implementation: closeIt, check: check('WAIT')}, {landing, acceptance: {'/p/scripts/check-acceptance-x.sh': 0}})
    const ran: Array<[string, string | undefined]> = []
    h.deps.gates.runScript = async (f: string, cwd?: string) => (ran.push([f, cwd]), 0)
    await runLoop(h.deps, opts({workers: 2}))
    expect(ran).toEqual([['/p/scripts/check-acceptance-x.sh', '/p/.helix/worktrees/a-1']])
  })

  it("the review threshold measures the attempt's worktree against its base tip, not the project root (SPEC 15.1)", async () => {
    const landing = new FakeLanding()
    const h = harness([B('a')], {implementation: closeIt, review: () => ({text: 'REVIEW_STATUS: CLEAN\nISSUES_COUNT: 0\nFINDINGS_FILED: 0\n'}), check: check('WAIT')}, {landing})
    const asked: Array<[string | null, string | undefined]> = []
    h.deps.gates.changedSince = async (mark: string | null, dir?: string) => (asked.push([mark, dir]), dir ? {lines: 500, files: 1} : {lines: 0, files: 0})
    await runLoop(h.deps, opts({workers: 2, autoReview: true, reviewThreshold: 100}))
    expect(asked).toEqual([['b0', '/p/.helix/worktrees/a-1']])
    expect(h.calls.filter((c) => c.action === 'review')).toHaveLength(1)
  })

  it("the implementation and review prompts name the attempt's worktree as the project, not the operator's checkout (SPEC 15.1)", async () => {
    const landing = new FakeLanding()
    const h = harness([B('a')], {implementation: closeIt, review: () => ({text: 'REVIEW_STATUS: CLEAN\nISSUES_COUNT: 0\nFINDINGS_FILED: 0\n'}), check: check('WAIT')}, {landing})
    const roots: Array<[string, string | undefined]> = []
    const prompt = h.deps.agents.prompt.bind(h.deps.agents)
    h.deps.agents.prompt = async (action, ctx) => (roots.push([action, ctx.root]), prompt(action, ctx))
    await runLoop(h.deps, opts({workers: 2, autoReview: true, reviewThreshold: 0}))
    expect(roots.filter(([a]) => a === 'implementation' || a === 'review')).toEqual([
      ['implementation', '/p/.helix/worktrees/a-1'],
      ['review', '/p/.helix/worktrees/a-1'],
    ])
  })

  it('--land none keeps the branch instead of landing', async () => {
    const landing = new FakeLanding()
    const h = harness([B('a')], {implementation: closeIt, check: check('WAIT')}, {landing})
    await runLoop(h.deps, opts({workers: 2, land: 'none', summary: true}))
    expect(landing.events).toContain('keep a')
    expect(landing.events).not.toContain('land a')
    // the kept branch is printed in summary mode too, where the landed line would be (SPEC 15.2)
    expect(h.summaryView().some((l) => /^helix: \[[\d:]+\] w1 kept a on branch helix\/a-1 \(--land none\)$/.test(l))).toBe(true)
  })

  it('the queue drain runs only once every slot is idle', async () => {
    const landing = new FakeLanding()
    let inFlight = 0
    const drainsWhileBusy: number[] = []
    const h = harness(
      [B('a'), B('b', {priority: 3})],
      {
        implementation: async (c, t) => {
          inFlight++
          // b is still in flight after a has landed and the loop decided what to do next
          if (c.beadId === 'b') await landing.log.seen('landed a').then(settled)
          closeIt(c, t)
          inFlight--
        },
        check: () => {
          drainsWhileBusy.push(inFlight)
          return {text: 'NEXT_ACTION: WAIT'}
        },
      },
      {landing},
    )
    await runLoop(h.deps, opts({workers: 2}))
    expect(drainsWhileBusy).toEqual([0])
  })

  it('SIGTERM with 3 in flight: every attempt aborted, unclaimed, its work preserved, 143', async () => {
    const landing = new FakeLanding()
    const ac = new AbortController()
    let started = 0
    const threeIn = latch()
    const h = harness(
      [B('a'), B('b'), B('c'), B('d')],
      {
        implementation: async (c) => {
          if (++started === 3) threeIn.open()
          if (!c.signal?.aborted) await new Promise((res) => c.signal?.addEventListener('abort', res, {once: true}))
          return {rc: 143, end: {end: 'aborted'}}
        },
      },
      {landing},
    )
    const p = runLoop(h.deps, opts({workers: 3, signal: ac.signal}))
    await threeIn.wait()
    ac.abort('SIGTERM')
    expect(await p).toEqual({exitCode: 143, stopReason: 'interrupted'})
    for (const id of ['a', 'b', 'c']) expect(h.tracker.get(id).status).toBe('open')
    expect(landing.events.filter((e) => e.startsWith('preserve')).sort()).toEqual(['preserve a (interrupted)', 'preserve b (interrupted)', 'preserve c (interrupted)'])
    expect(landing.events.some((e) => e.startsWith('land '))).toBe(false)
    expect(lastState(h).attempts).toEqual({})
  })

  it('SIGTERM while a landing waits (lost races): the landing has the run\'s signal, the attempt ends stopped, 143, nothing counted', async () => {
    const landing = new FakeLanding()
    const ac = new AbortController()
    // the landing keeps losing races until the stop, then answers as the remote landing does
    landing.hold.set('a', new Promise((res) => ac.signal.addEventListener('abort', res, {once: true})))
    landing.fail.set('a', 'interrupted')
    const h = harness([B('a')], {implementation: closeIt}, {landing})
    const p = runLoop(h.deps, opts({workers: 2, signal: ac.signal}))
    await landing.log.seen('land a')
    expect(landing.landOpts[0]?.signal).toBe(ac.signal)
    ac.abort('SIGTERM')
    expect(await p).toEqual({exitCode: 143, stopReason: 'interrupted'})
    expect(h.tracker.get('a').status).toBe('open')
    expect(String(h.tracker.get('a').notes ?? '')).toMatch(/NOT LANDED \[[^\]]+\]: interrupted; work kept at refs\/helix\/preserved\/a\/1/)
    expect(lastState(h).attempts).toEqual({})
  })

  it('--workers > 1 on a detached HEAD: exit 1 with the landing message, nothing written', async () => {
    const landing = new FakeLanding()
    landing.baseError = new HelixError('--workers needs a branch checked out (HEAD is detached)', 1)
    const h = harness([B('a')], {implementation: closeIt}, {landing})
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r.exitCode).toBe(1)
    expect(h.both).toEqual(['helix: --workers needs a branch checked out (HEAD is detached)'])
    expect(h.states).toEqual([])
    expect(h.calls).toEqual([])
  })

  it('an unavailable agent on one slot stops new dispatch; the other in-flight attempt finishes and lands', async () => {
    const landing = new FakeLanding()
    const together = barrier(2)
    const h = harness(
      [B('a'), B('b'), B('c')],
      {
        implementation: async (c, t) => {
          await together()
          if (c.beadId === 'a') return {rc: 1, verdict: {health: {kind: 'unavailable', reason: 'Not logged in'}}}
          // a's unavailability has been handled before b ends
          await settled()
          closeIt(c, t)
        },
      },
      {landing},
    )
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r).toEqual({exitCode: 4, stopReason: 'agent_unavailable'})
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['a', 'b'])
    expect(landing.events).toContain('landed b')
    expect(h.tracker.get('a').status).toBe('open')
    expect(landing.events).toContain('preserve a (the run stopped (Not logged in))')
  })
})

describe('--workers: pauses and alignment hold every slot', () => {
  it('a quota pause on one slot starts nothing new on any slot until it ends; the other attempt finishes', async () => {
    const landing = new FakeLanding()
    const order: string[] = []
    let quotaOnce = true
    const h = harness(
      [B('a', {priority: 0}), B('b', {priority: 1}), B('c', {priority: 2})],
      {
        implementation: async (c, t) => {
          order.push(`start ${c.beadId}`)
          if (c.beadId === 'a' && quotaOnce) {
            quotaOnce = false
            return {rc: 1, verdict: {health: {kind: 'quota' as const, resetAt: '2026-03-01T10:10:00Z', message: 'limit'}}}
          }
          closeIt(c, t)
        },
        check: check('WAIT'),
      },
      {landing},
    )
    h.deps.sleep = async (ms) => {
      h.sleeps.push(ms)
      order.push('pause')
      // the pause lasts until b has landed and the loop went as far as it could (a free slot, c ready)
      await landing.log.seen('landed b').then(settled)
      order.push('resume')
      h.clock.t += ms
    }
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r.exitCode).toBe(0)
    const resume = order.indexOf('resume')
    expect(order.indexOf('start c')).toBeGreaterThan(resume)
    expect(order.slice(0, order.indexOf('pause'))).toEqual(['start a', 'start b'])
    expect(landing.events).toContain('landed b')
    expect(lastState(h).completed_cycles).toBe(3)
  })

  it('periodic alignment waits until every slot is idle', async () => {
    const landing = new FakeLanding()
    let inFlight = 0
    const alignWhileBusy: number[] = []
    const h = harness(
      [B('a'), B('b')],
      {
        implementation: async (c, t) => {
          inFlight++
          if (c.beadId === 'b') await landing.log.seen('landed a').then(settled)
          closeIt(c, t)
          inFlight--
        },
        alignment: () => void alignWhileBusy.push(inFlight),
        check: check('WAIT'),
      },
      {landing},
    )
    await runLoop(h.deps, opts({workers: 2, reviewEvery: 1}))
    expect(alignWhileBusy.length).toBeGreaterThanOrEqual(1)
    expect(alignWhileBusy.every((n) => n === 0)).toBe(true)
  })
})
