// The loop's side of --land pr (SPEC 20.5), with fakes: an attempt ends at "pull request
// opened" (a summary line, the cycle completed, the body's facts handed to the landing), and
// the run-complete line counts the pull requests still awaiting merge.
import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import type {LandInfo, LandOptions, LandResult, LoopLanding, Workspace} from '../../src/loop/ports.js'
import {check, closeIt, harness, opts} from '../loop/fakes.js'

class PrLanding implements LoopLanding {
  infos: Array<LandInfo | undefined> = []
  async base() {
    return 'main'
  }
  async ensureExcludes() {}
  async prepare(bead: string, attempt: number, slot: number): Promise<Workspace> {
    return {slot, bead, attempt, dir: `/p/.helix/worktrees/${bead}-${attempt}`, branch: `helix/${bead}-${attempt}`, baseTip: 'b0', trackerDir: `/p/.helix/worktrees/${bead}-${attempt}/.ddx`}
  }
  async land(ws: Workspace, opts?: LandOptions): Promise<LandResult> {
    this.infos.push(opts?.info)
    return {landed: true, sha: `sha-${ws.bead}`, commits: ['c'], pr: {url: `https://forge.test/pull/${ws.bead}`}}
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

describe('--land pr in the loop', () => {
  it('each attempt ends at "pull request opened"; --max-cycles counts them; the run-complete line counts those awaiting merge', async () => {
    const landing = new PrLanding()
    const h = harness([{id: 'a', title: 'A'}, {id: 'b', title: 'B'}, {id: 'c', title: 'C'}], {implementation: closeIt, check: check('STOP')}, {landing})
    h.deps.alwaysWorktree = true
    h.deps.awaitingMerge = () => landing.infos.length
    const r = await runLoop(h.deps, opts({workers: 1, maxCycles: 2}))
    expect(r.exitCode).toBe(0)
    const lines = h.both
    expect(lines.filter((l) => /pull request opened for [ab]: https:\/\/forge\.test\/pull\/[ab] \(awaiting merge\)/.test(l))).toHaveLength(2)
    expect(lines.some((l) => / landed /.test(l))).toBe(false)
    expect(lines.find((l) => l.includes('run complete'))).toMatch(/2 attempted, 2 completed, .*2 awaiting merge ═══$/)
    // the agent's final text reaches the landing for the pull request's body
    expect(landing.infos.every((i) => typeof i?.summary === 'string')).toBe(true)
  })
})
