// The loop's three hooks for `--remote` (SPEC 19.2, h4), with fakes: a worktree per
// attempt also with one slot, the agent's DDX_BEAD_DIR from its workspace, and beads
// another host holds waited for instead of drained past.
import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import {waitLine} from '../../src/loop/scheduler.js'
import type {LandResult, LoopLanding, Workspace} from '../../src/loop/ports.js'
import {check, closeIt, harness, opts} from './fakes.js'

const B = (id: string, extra: Record<string, unknown> = {}) => ({id, title: `title ${id}`, ...extra})

class WsLanding implements LoopLanding {
  events: string[] = []
  async base() {
    return 'main'
  }
  async ensureExcludes() {}
  async prepare(bead: string, attempt: number, slot: number): Promise<Workspace> {
    this.events.push(`prepare ${bead}`)
    return {slot, bead, attempt, dir: `/p/.helix/worktrees/${bead}-${attempt}`, branch: `helix/${bead}-${attempt}`, baseTip: 'b0', trackerDir: `/p/.helix/worktrees/${bead}-${attempt}/.ddx`}
  }
  async land(ws: Workspace): Promise<LandResult> {
    this.events.push(`land ${ws.bead}`)
    return {landed: true, sha: 's', commits: ['c']}
  }
  async preserve() {
    return null
  }
  async keepBranch(ws: Workspace) {
    return ws.branch
  }
  async preservedRef() {
    return null
  }
}

describe('--remote hooks in the loop', () => {
  it('alwaysWorktree: one slot still works in a worktree whose own tracker is the agent DDX_BEAD_DIR, and lands it', async () => {
    const landing = new WsLanding()
    const h = harness([B('a')], {implementation: closeIt, check: check('STOP')}, {landing})
    h.deps.alwaysWorktree = true
    const r = await runLoop(h.deps, opts({workers: 1}))
    expect(r.exitCode).toBe(0)
    const call = h.calls.find((c) => c.action === 'implementation')
    expect([call?.cwd, call?.env?.DDX_BEAD_DIR]).toEqual(['/p/.helix/worktrees/a-1', '/p/.helix/worktrees/a-1/.ddx'])
    expect(landing.events).toEqual(['prepare a', 'land a'])
  })

  it('remoteWaiting: while another host holds a bead the run waits for it instead of draining', async () => {
    const landing = new WsLanding()
    let waits = 2
    const h = harness([B('a', {status: 'in_progress', owner: 'host-b'})], {check: check('STOP')}, {landing})
    h.deps.alwaysWorktree = true
    h.deps.remoteWaiting = () => (waits-- > 0 ? [{until: new Date(h.clock.t + 3000).toISOString()}] : [])
    const r = await runLoop(h.deps, opts({workers: 1}))
    expect(r.exitCode).toBe(0)
    // two waits of ~3 s before the drain's check ran
    expect(h.sleeps.filter((ms) => ms >= 2000 && ms <= 3000)).toHaveLength(2)
    const checks = h.calls.filter((c) => c.action === 'check')
    expect(checks).toHaveLength(1)
  })

  it('a wait for another host or a pull request is said in words once, and again only when what is waited for changes', async () => {
    const landing = new WsLanding()
    const plan = [
      [{what: 'a claimed by host-b'}],
      [{what: 'a claimed by host-b'}],
      [{what: 'a claimed by host-c'}, {what: '1 pull request to merge (c; --pr-wait until 01:30:00)'}],
      [{what: 'a claimed by host-c'}, {what: '1 pull request to merge (c; --pr-wait until 01:30:00)'}],
    ]
    const h = harness([B('a', {status: 'in_progress', owner: 'host-b'})], {check: check('STOP')}, {landing})
    h.deps.alwaysWorktree = true
    h.deps.remoteWaiting = () => (plan.shift() ?? []).map((w) => ({until: new Date(h.clock.t + 3000).toISOString(), ...w}))
    expect((await runLoop(h.deps, opts({workers: 1}))).exitCode).toBe(0)
    expect(h.sleeps.filter((ms) => ms >= 2000 && ms <= 3000)).toHaveLength(4)
    expect(h.normal.filter((l) => l.includes('waiting'))).toEqual([
      'helix: waiting for a claimed by host-b',
      'helix: waiting for a claimed by host-c; 1 pull request to merge (c; --pr-wait until 01:30:00)',
    ])
  })
})

describe('waitLine', () => {
  it('beads backing off alone: the old line with its length; words: said once, five or more shortened', () => {
    expect(waitLine([{until: 'x'}], 4200, null)).toBe('helix: only backing-off issues remain; waiting 5s')
    expect(waitLine([{until: 'x'}], 4200, 'helix: only backing-off issues remain; waiting 5s')).toBe('helix: only backing-off issues remain; waiting 5s')
    const w = (n: number) => Array.from({length: n}, (_, i) => ({until: 'x', what: `b${i} claimed by h`}))
    expect(waitLine(w(2), 1000, null)).toBe('helix: waiting for b0 claimed by h; b1 claimed by h')
    expect(waitLine(w(2), 1000, 'helix: waiting for b0 claimed by h; b1 claimed by h')).toBeNull()
    expect(waitLine([...w(6), {until: 'x'}], 1000, null)).toBe('helix: waiting for b0 claimed by h; b1 claimed by h; b2 claimed by h; b3 claimed by h; 2 more')
  })
})
