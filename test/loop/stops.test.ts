import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import type {LandResult, LoopLanding, Workspace} from '../../src/loop/ports.js'
import {Stop, stopExitCode, interruptStop, type StopCause} from '../../src/loop/stop.js'
import {HelixError} from '../../src/util/errors.js'
import {check, closeIt, harness, lastState, opts} from './fakes.js'

const B = (id: string) => ({id, title: `title ${id}`})

describe('a stop derives its exit code from its cause (SPEC 17)', () => {
  it('every reason maps to one code', () => {
    const cases: Array<[StopCause, number]> = [
      [{reason: 'completed'}, 0],
      [{reason: 'max_cycles'}, 0],
      [{reason: 'budget'}, 0],
      [{reason: 'blocked'}, 0],
      [{reason: 'agent_unavailable'}, 4],
      [{reason: 'quota'}, 4],
      [{reason: 'interrupted', signal: 'SIGINT'}, 130],
      [{reason: 'interrupted', signal: 'SIGTERM'}, 143],
      [{reason: 'interrupted', signal: 'SIGHUP'}, 129],
      [{reason: 'error'}, 1],
      [{reason: 'error', exit: 3}, 3],
    ]
    for (const [cause, code] of cases) expect([cause, stopExitCode(cause)]).toEqual([cause, code])
    expect(new Stop('quota').exitCode).toBe(4)
    const ac = new AbortController()
    ac.abort('SIGTERM')
    expect(interruptStop(ac.signal)).toMatchObject({reason: 'interrupted', exitCode: 143, message: 'helix: interrupted (SIGTERM)'})
  })
})

class RecordingLanding implements LoopLanding {
  preserved: string[] = []
  async base() {
    return 'main'
  }
  async ensureExcludes() {}
  async prepare(bead: string, attempt: number, slot: number): Promise<Workspace> {
    return {slot, bead, attempt, dir: `/p/wt/${bead}`, branch: `helix/${bead}-${attempt}`, baseTip: 'b0'}
  }
  async land(ws: Workspace): Promise<LandResult> {
    return {landed: true, sha: `sha-${ws.bead}`, commits: []}
  }
  async preserve(ws: Workspace, reason: string) {
    this.preserved.push(`${ws.bead} (${reason})`)
    return `refs/helix/preserved/${ws.bead}/${ws.attempt}`
  }
  async keepBranch(ws: Workspace) {
    return ws.branch
  }
  async preservedRef() {
    return null
  }
}

describe('user error vs bug (issue 16 item 5)', () => {
  /** the first tracker read after the agent's dispatch throws `err` */
  function failingReadAfterDispatch(err: Error, landing?: LoopLanding) {
    let dispatched = false
    let thrown = false
    const h = harness([B('a'), B('b')], {implementation: () => void (dispatched = true)}, landing ? {landing} : {})
    const read = h.tracker.read.bind(h.tracker)
    h.tracker.read = async () => {
      if (dispatched && !thrown) {
        thrown = true
        throw err
      }
      return read()
    }
    return h
  }

  it('a bug: one line naming the session log, the stack in the log; the claim is released and the work preserved', async () => {
    const landing = new RecordingLanding()
    const bug = new TypeError("Cannot read properties of undefined (reading 'status')")
    const h = failingReadAfterDispatch(bug, landing)
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r).toEqual({exitCode: 1, stopReason: 'error'})
    const line = `helix: internal error: Cannot read properties of undefined (reading 'status') (a bug in helix; the stack is in ${h.log.path})`
    expect(h.both).toContain(line)
    expect(h.both.filter((l) => l.includes('internal error'))).toHaveLength(1)
    const rec = h.log.records.find((x) => x.msg === 'internal error (a bug in helix)')
    expect(rec?.fields?.stack).toBe(bug.stack)
    // the broken attempt ended as a stop ends it (work preserved, claim released); the other slot's attempt ended its own way
    expect(landing.preserved).toContain("a (the run stopped (Cannot read properties of undefined (reading 'status')))")
    for (const id of ['a', 'b']) expect(h.tracker.get(id).status).toBe('open')
    expect(lastState(h)).toMatchObject({stop_reason: 'error', stop_message: "internal error: Cannot read properties of undefined (reading 'status')"})
  })

  it('a user error (HelixError) stays one line with its own exit code, and is not called a bug', async () => {
    const h = failingReadAfterDispatch(new HelixError('tracker is locked by pid 99 (waited 10s)\nsecond line', 3))
    const r = await runLoop(h.deps, opts())
    expect(r).toEqual({exitCode: 3, stopReason: 'error'})
    expect(h.both).toContain('helix: tracker is locked by pid 99 (waited 10s)')
    expect(h.both.some((l) => l.includes('second line') || l.includes('internal error'))).toBe(false)
    expect(h.log.events).not.toContain('internal error (a bug in helix)')
    expect(h.tracker.calls).toContain('unclaim a')
  })
})

describe('a review that stops the run after a completed bead (one worker)', () => {
  it('quota beyond --max-quota-wait during the review: COMPLETE is counted in the run-complete line', async () => {
    const far = new Date(Date.parse('2026-03-01T10:00:00Z') + 10 * 3600_000).toISOString()
    const h = harness([B('a')], {implementation: closeIt, review: () => ({verdict: {health: {kind: 'quota' as const, resetAt: far, message: 'usage limit'}}}), check: check('WAIT')})
    const r = await runLoop(h.deps, opts({autoReview: true, reviewThreshold: 0, maxQuotaWaitSec: 600}))
    expect(r).toEqual({exitCode: 4, stopReason: 'quota'})
    expect(h.both.some((l) => /→ COMPLETE/.test(l))).toBe(true)
    expect(h.both).toContain('helix: ═══ run complete: 1 attempted, 1 completed, 0 skipped, 20 tokens ═══')
    expect(lastState(h)).toMatchObject({completed_cycles: 1, current_bead: null, workers: []})
  })
})

describe("a tracker-lock timeout in the agent's own tracker command (issue 16, smaller)", () => {
  it('is the failure reason, never "agent unavailable", even twice in a row on two beads', async () => {
    const out = (id: string) => `helix: tracker is locked by another writer (waited 10s)\nclosed ${id}`
    const h = harness([B('hx-0a1b2c3d'), B('hx-9f8e7d6c')], {implementation: (c) => ({rc: 2, text: out(c.beadId as string)}), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    const r = await runLoop(h.deps, opts({maxCycles: 0}))
    expect(r.stopReason).not.toBe('agent_unavailable')
    expect(h.both.some((l) => l.includes('unavailable'))).toBe(false)
    expect(lastState(h).cycles[0]?.reason).toBe("rc=2: tracker lock timeout in the agent's tracker command: tracker is locked by another writer (waited 10s)")
  })
})
