/**
 * SPEC 15.4 in the loop: with --workers > 1 the summary pointer names the slot
 * (`log L40–L88 (w2) in <path>`) and the dispatch is told its slot (the runner tags the
 * records); with one worker the line is exactly as before. run-state `workers[].pid`
 * holds the slot's agent pid while its dispatch runs, and is cleared when it ends.
 */
import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import type {DispatchArgs} from '../../src/loop/ports.js'
import {barrier} from '../support/latch.js'
import {waitFor} from '../support/wait.js'
import {check, closeIt, FakeLanding, harness, lastState, opts, type AgentCall, type Harness} from './fakes.js'

const B = (id: string) => ({id, title: `title ${id}`})
/** the fake agent "spawns" with pid 5000 + slot, as the runner's onSpawn would report it */
function spawning(h: Harness): Array<DispatchArgs> {
  const seen: DispatchArgs[] = []
  const real = h.deps.agents.dispatch.bind(h.deps.agents)
  h.deps.agents.dispatch = async (args) => {
    seen.push(args)
    args.onSpawn?.(5000 + (args.slot ?? 1))
    return real(args)
  }
  return seen
}

const LOG = '/abs/.helix-logs/helix-20260101-000000.log'

describe('per-slot log pointers and agent pids (SPEC 15.4)', () => {
  it('--workers 2: the summary pointer carries (wN), the request its slot; workers[].pid is set while the agent runs and cleared after', async () => {
    const together = barrier(2)
    const pidsWhileRunning: Array<number | null> = []
    let h!: Harness
    const impl = async (c: AgentCall, t: Parameters<typeof closeIt>[1]) => {
      await together()
      // the pid write is not awaited by the loop: wait until it has landed in run-state
      const pid = () => lastState(h).workers?.find((w) => w.bead === c.beadId)?.pid ?? null
      await waitFor(() => pid() !== null, {intervalMs: 1, what: `the pid of ${c.beadId} in run-state`})
      pidsWhileRunning.push(pid())
      closeIt(c, t)
    }
    h = harness([B('a'), B('b')], {implementation: impl, check: check('WAIT')}, {landing: new FakeLanding()})
    const seen = spawning(h)
    const r = await runLoop(h.deps, opts({workers: 2, summary: true}))
    expect(r).toEqual({exitCode: 0, stopReason: 'completed'})
    expect(seen.filter((a) => a.action === 'implementation').map((a) => [a.beadId, a.slot])).toEqual([
      ['a', 1],
      ['b', 2],
    ])
    // the check of the drained queue belongs to no slot
    expect(seen.find((a) => a.action === 'check')?.slot).toBeUndefined()
    for (const slot of [1, 2]) {
      const line = h.summaryView().find((l) => new RegExp(`^helix: \\[[\\d:]+\\] w${slot} codex complete `).test(l))
      expect(line).toMatch(new RegExp(`^helix: \\[[\\d:]+\\] w${slot} codex complete \\(rc=0, 1s, 10 tokens\\) — log L\\d+–L\\d+ \\(w${slot}\\) in ${LOG.replace(/[.]/g, '\\.')}$`))
    }
    expect(pidsWhileRunning.sort()).toEqual([5001, 5002])
    // cleared when the dispatch ended, while the slot was still busy (gates, landing)
    expect(h.states.some((s) => (s.workers ?? []).some((w) => w.slot === 2 && w.pid === null) && h.states.indexOf(s) > h.states.findIndex((x) => (x.workers ?? []).some((w) => w.pid === 5002)))).toBe(true)
    expect(lastState(h).workers).toEqual([])
  })

  it('one worker: the pointer has no slot suffix and the request no slot; the pid is still recorded', async () => {
    let pid: number | null = null
    let h!: Harness
    h = harness(
      [B('a')],
      {
        implementation: async (c, t) => {
          await waitFor(() => lastState(h).workers?.[0]?.pid != null, {intervalMs: 1, what: 'the pid in run-state'})
          pid = lastState(h).workers?.[0]?.pid ?? null
          closeIt(c, t)
        },
        check: check('WAIT'),
      },
      {},
    )
    const seen = spawning(h)
    const r = await runLoop(h.deps, opts({summary: true}))
    expect(r.exitCode).toBe(0)
    expect(seen.every((a) => a.slot === undefined)).toBe(true)
    const line = h.summaryView().find((l) => / codex complete /.test(l))
    expect(line).toMatch(new RegExp(`^helix: \\[[\\d:]+\\] codex complete \\(rc=0, 1s, 10 tokens\\) — log L\\d+–L\\d+ in ${LOG.replace(/[.]/g, '\\.')}$`))
    expect(pid).toBe(5001)
    expect(lastState(h).workers).toEqual([])
  })
})
