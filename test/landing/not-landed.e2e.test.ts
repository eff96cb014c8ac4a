// SPEC 18.1a / 18.2: every end of a --workers attempt that is not a landing
// reopens the bead the agent closed; a run killed between the close and the
// landing is finished by the next start. Real git, a stub agent; the built CLI where a signal
// ends the run, the rest in the test's own process.
import {existsSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {trackProcess} from '../support/tmp.js'
import {pidAlive} from '../../src/proc/process.js'
import {g, helixIn, invariant, landedCount, project, runIn, start, waitFor} from './crash-helpers.js'

describe('done means landed', () => {
  // one run for two ends that were two runs: an attempt whose agent is still at work after its
  // close, and an attempt in its review, both in flight when the SIGTERM comes
  it('SIGTERM with one agent still at work after its close and another bead in its review: exit 143, both closed beads reopened with NOT LANDED naming the preserved ref, nothing left', async () => {
    const p = project(['hx-a', 'hx-b'], {'hx-a': {sleepAfterCloseMs: 60_000}})
    writeFileSync(path.join(p.stub, 'review-sleep'), '60000')
    const run = start(p, 2, ['--review-threshold', '0'])
    await waitFor(() => p.calls().some((c) => c.bead === 'hx-a' && c.phase === 'closed') && p.calls().some((c) => c.phase === 'review'), 60_000)
    for (const c of p.calls()) trackProcess(c.pid as number)
    run.child.kill('SIGTERM')
    expect((await run.done).code, run.output()).toBe(143)
    const a = p.tracked().get('hx-a')
    expect(a?.status).toBe('open')
    expect(String(a?.notes)).toMatch(/NOT LANDED \[\d{4}-\d\d-\d\dT[^\]]+\]: interrupted; work kept at refs\/helix\/preserved\/hx-a\/1/)
    expect(g(p.root, 'log', '-1', '--format=%s', 'refs/helix/preserved/hx-a/1')).toBe('work on hx-a')
    const b = p.tracked().get('hx-b')
    expect(b?.status).toBe('open')
    expect(String(b?.notes)).toMatch(/NOT LANDED \[[^\]]+\]: review stopped the run; work kept at refs\/helix\/preserved\/hx-b\/1/)
    expect(g(p.root, 'log', '-1', '--format=%s', 'refs/helix/preserved/hx-b/1')).toBe('work on hx-b')
    expect(invariant(p, ['hx-a', 'hx-b'])).toEqual([])
  })

  it('QUOTA after the close: the bead is reopened, not counted completed', async () => {
    const p = project(['hx-a'], {'hx-a': {answer: 'HELIX_AGENT_STATUS: QUOTA 7200', rc: 1}})
    const r = await runIn(p, 2, ['--no-auto-review', '--max-quota-wait', '0'])
    expect(r.out).not.toMatch(/1 completed/)
    const a = p.tracked().get('hx-a')
    expect(a?.status).toBe('open')
    expect(String(a?.notes)).toMatch(/NOT LANDED .*quota.*; work kept at refs\/helix\/preserved\/hx-a\/1/)
    expect(invariant(p, ['hx-a'])).toEqual([])
  })

  it('kill -9 between the close and the landing: the next run resumes the attempt and lands it once', async () => {
    const p = project(['hx-a', 'hx-b'], {'hx-a': {sleepAfterCloseMs: 60_000}, 'hx-b': {sleepMs: 60_000}})
    const run = start(p, 2, ['--no-auto-review'])
    // hx-a closed, and hx-b's attempt under way in the other slot (on a loaded machine
    // hx-a could close before the second worker had started, leaving no hx-b attempt)
    await waitFor(() => p.calls().some((c) => c.phase === 'closed') && p.calls().some((c) => c.bead === 'hx-b' && c.phase === 'start'), 60_000)
    run.child.kill('SIGKILL')
    await run.done
    // the dead run's agents die with it here (a reboot); hx-b's claim then goes stale at once (SPEC 13.3)
    for (const c of p.calls()) {
      trackProcess(c.pid as number)
      try {
        process.kill(c.pid as number, 'SIGKILL')
      } catch {
        // gone already
      }
    }
    // a SIGKILL is delivered when the process next runs: on a loaded machine hx-b's agent could
    // still be alive, carrying its claim's dispatch id, when the next run judged the claim, so
    // the run took it for live and left hx-b in progress
    await waitFor(() => p.calls().every((c) => !pidAlive(c.pid as number)), {timeoutMs: 30_000, what: "the dead run's agents to be gone"})
    expect(p.tracked().get('hx-a')?.status).toBe('closed')
    expect(landedCount(p.root, 'hx-a')).toBe(0)
    // doctor FAILs on the closed bead whose work is off the base, and --dry-run lists what the start would do
    const doc = await helixIn(p, ['doctor'])
    expect(doc.code).not.toBe(0)
    expect(doc.out).toMatch(/FAIL.*closed bead hx-a has its work off main \(attempt 1, 1 commit\(s\)/)
    const dry = await helixIn(p, ['run', '--dry-run', '--workers', '2', '--agent', 'true'])
    expect(dry.out).toMatch(/helix: would resume hx-a attempt 1: closed, 1 commit not on main to land/)
    expect(dry.out).toMatch(/helix: would keep hx-b attempt 1 \(1 commit\)|would remove .*hx-b-1/)
    expect(p.tracked().get('hx-a')?.status).toBe('closed')
    p.setPlans({})
    const r = await runIn(p, 2, ['--no-auto-review'])
    expect(r.out).toMatch(/helix: \[\d\d:\d\d:\d\d\] resuming hx-a attempt 1 after a crash: 1 commit\(s\) to land/)
    expect(r.code).toBe(0)
    expect(landedCount(p.root, 'hx-a')).toBe(1)
    expect(p.tracked().get('hx-a')?.status, r.out).toBe('closed')
    expect(p.tracked().get('hx-b')?.status, r.out).toBe('closed')
    expect(invariant(p, ['hx-a', 'hx-b'])).toEqual([])
    expect((await helixIn(p, ['doctor'])).out).not.toMatch(/not landed/)
  })

  it('a ready bead whose id cannot name a ref is skipped with a reason; the others land', async () => {
    const p = project(['hx-b'], {}, {extra: [{id: 'hx-a.lock'}, {id: 'hx-ü'}]})
    const r = await runIn(p, 2, ['--no-auto-review'])
    expect(r.out).toMatch(/helix: {3}hx-a\.lock — its id cannot name a git branch or ref/)
    expect(r.out).toMatch(/helix: {3}hx-ü — its id cannot name a git branch or ref/)
    expect(p.tracked().get('hx-b')?.status).toBe('closed')
    expect(landedCount(p.root, 'hx-b')).toBe(1)
    expect(p.tracked().get('hx-a.lock')?.status).toBe('open')
    expect(invariant(p, ['hx-b'])).toEqual([])
  })

  it('helix run inside an attempt worktree (or on a helix/* branch) refuses in one line, exit 1', async () => {
    const p = project(['hx-a'])
    g(p.root, 'worktree', 'add', '-q', '-b', 'helix/hx-a-1', path.join(p.root, '.helix', 'worktrees', 'hx-a-1'))
    const r = await helixIn(p, ['run', '--workers', '2', '--agent', 'true'], path.join(p.root, '.helix', 'worktrees', 'hx-a-1'))
    expect(r.code).toBe(1)
    expect(r.out.trim().split('\n')).toHaveLength(1)
    expect(r.out).toMatch(/^helix run: the checkout is on helix's attempt branch helix\/hx-a-1; run helix in the project's main worktree/)
    expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
  })
})
