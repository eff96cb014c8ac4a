import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {beads, calls, helixAsync, helixIn, implOrder, pidGone, runState} from './e2e-helpers.js'
import {helixProject} from '../support/project.js'
import {waitFor} from '../support/wait.js'

describe('signals and timeouts (built CLI)', () => {
  // (with run-control's former 'SIGTERM in the middle of an agent call': one run asserts both)
  it('SIGTERM during an agent call, the agent ignoring SIGTERM with a forked grandchild: everything gone, 143, bead unclaimed, interrupted, pid file gone', async () => {
    await using p = await helixProject({beads: [{id: 'hx-stubborn'}], agent: {implementation: ['hang-ignore-term-fork']}, git: true})
    const {child, done} = helixAsync(p, ['run', '--no-auto-review'])
    const pidsFile = path.join(p.stubDir, 'pids')
    await waitFor(() => existsSync(pidsFile) && readFileSync(pidsFile, 'utf8').trim().split('\n').length >= 2, 20_000)
    // the claim is the supervisor's: its pid, its start token, the token handed to the agent
    const claimed = beads(p).get('hx-stubborn')!
    expect(claimed).toMatchObject({status: 'in_progress', owner: 'helix', 'claimed-pid': child.pid})
    expect(String(claimed['claimed-start'])).toMatch(/^\d+$/)
    expect(claimed['claim-token']).toBe(calls(p)[0].env.HELIX_CLAIM_TOKEN)
    child.kill('SIGTERM')
    const r = await done
    expect(r.code).toBe(143)
    const pids = readFileSync(pidsFile, 'utf8').trim().split('\n').map(Number)
    for (const pid of [...pids, calls(p)[0].pid]) expect(pidGone(pid)).toBe(true)
    const b = beads(p).get('hx-stubborn')!
    expect(b.status).toBe('open')
    expect(b['claim-token']).toBeUndefined()
    expect(runState(p).stop_reason).toBe('interrupted')
    expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
    expect(r.stderr).toContain('helix: ═══ run complete: 1 attempted, 0 completed, 0 skipped')
  })

  it('SIGINT → 130', async () => {
    await using p = await helixProject({beads: [{id: 'hx-i'}], agent: {implementation: ['hang']}, git: true})
    const {child, done} = helixAsync(p, ['run', '--no-auto-review'])
    await waitFor(() => calls(p).length > 0, 20_000)
    child.kill('SIGINT')
    const r = await done
    expect(r.code).toBe(130)
    expect(beads(p).get('hx-i')!.status).toBe('open')
  })

  it('SIGHUP (terminal or ssh session gone) → 129: agent killed, bead unclaimed, interrupted, pid file gone', async () => {
    await using p = await helixProject({beads: [{id: 'hx-h'}], agent: {implementation: ['hang']}, git: true})
    const {child, done} = helixAsync(p, ['run', '--no-auto-review'])
    await waitFor(() => calls(p).length > 0, 20_000)
    child.kill('SIGHUP')
    const r = await done
    expect(r.code).toBe(129)
    expect(r.stderr).toContain('helix: interrupted (SIGHUP)')
    expect(pidGone(calls(p)[0].pid)).toBe(true)
    expect(beads(p).get('hx-h')!.status).toBe('open')
    expect(runState(p).stop_reason).toBe('interrupted')
    expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
  })

  it('an agent timeout fails the attempt; the retry completes', async () => {
    await using p = await helixProject({beads: [{id: 'hx-t'}], agent: {implementation: ['hang', 'close'], check: ['next:WAIT']}, git: true})
    // the timeout applies to the retry too, whose stub closes the bead through the real CLI:
    // 8 s leaves a loaded machine room for that (with 3 s it timed out as well: SALVAGED)
    // the run in-process (the timeout is the agent's, a process either way)
    const r = await helixIn(p, ['run', '--no-auto-review', '--timeout', '8'])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/helix: \[\d\d:\d\d:\d\d\] codex timeout after 8s — killed/)
    expect(r.stderr).toContain('helix: implementation failed during cycle 1 (will not count toward completed cycles)')
    expect(implOrder(p)).toEqual(['hx-t', 'hx-t'])
    expect(runState(p)).toMatchObject({completed_cycles: 1, attempted_cycles: 2})
    expect(runState(p).cycles.map((c: {outcome: string}) => c.outcome)).toEqual(['TIMEOUT', 'COMPLETE'])
  })
})
