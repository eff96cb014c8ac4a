// SPEC 19.4 with 20.1 and 20.2 through the built CLI: a host cut off its remote (a symlink
// between the clone and the bare remote, removed and put back) while it lands, its lease running
// out meanwhile, another host taking the bead over, a kill -9 during the wait, --max-offline.
// Each scenario waits on real leases and backoffs (3-12 s), so `npm test` runs the two that
// show the core (a landing waits and lands; a kill during the wait is finished after a restart)
// and `npm run test:stress` (HELIX_STRESS_FULL=1, in .ci/run) runs them all.
import {readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {bead, g, makeFleet} from './helpers.js'
import {cloneBehindLink, events, startHost, tipBeads, until} from './fleet-harness.js'

const itFull = STRESS_FULL ? it : it.skip

/**
 * one bead and one host behind a link to the bare remote; once its agent has started, the link
 * is removed (the remote gone), and only then may the agent finish (its gate file): the landing
 * meets the cut however long the machine took to notice the start (CI lost that race once)
 */
async function cutOnceStarted(host: string, args: string[], env: NodeJS.ProcessEnv) {
  const f = makeFleet([bead('hx-1')])
  const {dir, link} = cloneBehindLink(f, host)
  const log = path.join(f.dir, 'agents.jsonl')
  const gate = path.join(f.dir, 'gate')
  const h = startHost(dir, host, log, args, {...env, FLEET_GATE: gate})
  await until(() => events(log).some((e) => e.event === 'start'), 60_000, 'the agent to start')
  rmSync(link)
  writeFileSync(gate, '')
  return {f, dir, link, log, h}
}

describe('helix run --remote cut off its remote while it lands (built CLI)', () => {
  it('a finished attempt whose remote is gone when it lands waits for it and lands once it answers: the agent runs once, nothing is counted', async () => {
    // the lease (60 s) and --max-offline (600 s) outlast the test: only the remote's return ends the wait
    const {f, dir, link, log, h} = await cutOnceStarted('host-w', ['--lease', '60', '--max-offline', '600'], {FLEET_SLEEP_MS: '1500'})
    await until(() => /hx-1 waits to land until the remote origin answers; its claim and worktree are kept/.test(h.out()), 60_000, 'the landing to wait for the remote')
    // a few tries meanwhile, none of them the end of the attempt
    await new Promise((r) => setTimeout(r, 2500))
    expect(h.out()).not.toMatch(/NOT LANDED|not landed/)
    symlinkSync(f.bare, link)
    expect(await h.done, h.out()).toBe(0)
    expect(h.out()).toMatch(/the remote origin is unreachable \(git: .*does not appear to be a git repository/)
    // its own claim, just landed, is not waited for as if something backed off
    expect(h.out()).not.toMatch(/backing-off|waiting \d+s/)
    expect(h.out()).not.toMatch(/NOT LANDED|not landed|blocked/)
    // the agent ran once; the bead is closed at the tip with its work, no attempt counted, no claim or worktree left
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(1)
    expect(tipBeads(f.bare)[0]).toMatchObject({id: 'hx-1', status: 'closed'})
    expect(tipBeads(f.bare)[0]?.['helix-attempts']).toBeUndefined()
    expect(g(f.bare, 'show', 'main:work/hx-1.txt')).toBe('done by host-w')
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/', 'refs/helix/preserved/')).toBe('')
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
  }, 240_000)

  it('killed -9 while its landing waits for the remote, then restarted once the remote is back: the attempt lands without running the agent again', async () => {
    const args = ['--lease', '60', '--max-offline', '600']
    const {f, dir, link, log, h} = await cutOnceStarted('host-k', args, {FLEET_SLEEP_MS: '1000'})
    await until(() => /hx-1 waits to land until the remote origin answers/.test(h.out()), 60_000, 'the landing to wait for the remote')
    process.kill(h.child.pid as number, 'SIGKILL')
    await h.done
    symlinkSync(f.bare, link)
    // the claim is still this host's run's (60 s lease): the restart finishes the attempt (SPEC 20.2)
    const again = startHost(dir, 'host-k', log, args, {FLEET_SLEEP_MS: '1000'})
    expect(await again.done, again.out()).toBe(0)
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(1)
    expect(tipBeads(f.bare)[0]).toMatchObject({id: 'hx-1', status: 'closed'})
    expect(g(f.bare, 'show', 'main:work/hx-1.txt')).toBe('done by host-k')
    expect(g(f.bare, 'log', '--format=%s', 'main').split('\n').filter((m) => m === 'work on hx-1')).toHaveLength(1)
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('')
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
  }, 240_000)

  itFull('a finished attempt whose lease runs out while the remote is away still lands once it answers, when no host took the bead over: the agent runs once (SPEC 20.1, 20.2)', async () => {
    // --lease 3: the partition outlasts it; --max-offline 600 outlasts the test
    const {f, dir, link, log, h} = await cutOnceStarted('host-e', ['--lease', '3', '--max-offline', '600'], {FLEET_SLEEP_MS: '1000'})
    await until(() => /hx-1 waits to land until the remote origin answers/.test(h.out()), 60_000, 'the landing to wait for the remote')
    await until(() => /lost the claim on hx-1 \(its lease expired unrenewed\)/.test(h.out()), 60_000, 'the lease to run out unrenewed')
    await until(() => /hx-1's claim ran out while the remote origin is unreachable; it still lands when the remote answers unless another host has taken hx-1 over/.test(h.out()), 60_000, 'the words of the wait past the lease')
    expect(h.out()).not.toMatch(/NOT LANDED|not landed/)
    symlinkSync(f.bare, link)
    expect(await h.done, h.out()).toBe(0)
    expect(h.out()).not.toMatch(/NOT LANDED|not landed|blocked/)
    // nobody took the claim over: the finished work lands as it is, not thrown away and redone
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(1)
    expect(tipBeads(f.bare)[0]).toMatchObject({id: 'hx-1', status: 'closed'})
    expect(tipBeads(f.bare)[0]?.['helix-attempts']).toBeUndefined()
    expect(tipBeads(f.bare)[0]?.notes ?? '').not.toMatch(/NOT LANDED/)
    expect(g(f.bare, 'log', '--format=%s', 'main').split('\n').filter((m) => m === 'work on hx-1')).toHaveLength(1)
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/', 'refs/helix/preserved/')).toBe('')
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
  }, 240_000)

  itFull('a finished attempt whose lease ran out while the remote was away, and which another host took over and landed meanwhile, lands nothing when the remote answers: the bead is closed once, the work kept, nothing counted', async () => {
    const {f, dir, link, log, h: a} = await cutOnceStarted('host-a', ['--lease', '3', '--max-offline', '600'], {FLEET_SLEEP_MS: '500', HELIX_LEASE_SKEW: '1'})
    await until(() => /hx-1's claim ran out while the remote origin is unreachable/.test(a.out()), 60_000, 'the lease of host-a to run out')
    // host-b waits for the expired claim (plus the skew), takes it over, runs the agent and lands
    const b = startHost(f.clone('host-b'), 'host-b', log, ['--lease', '3'], {FLEET_SLEEP_MS: '200', HELIX_LEASE_SKEW: '1'})
    expect(await b.done, b.out()).toBe(0)
    expect(b.out()).toMatch(/took over the expired claim on hx-1 of host-a/)
    symlinkSync(f.bare, link)
    expect(await a.done, a.out()).toBe(0)
    expect(a.out()).toMatch(/hx-1 → NOT LANDED \(the claim on hx-1 was taken over by another host while the remote origin was unreachable; nothing landed\)/)
    expect(tipBeads(f.bare)[0]).toMatchObject({id: 'hx-1', status: 'closed'})
    expect(tipBeads(f.bare)[0]?.['helix-attempts']).toBeUndefined()
    expect(g(f.bare, 'show', 'main:work/hx-1.txt')).toBe('done by host-b')
    expect(g(f.bare, 'log', '--format=%s', 'main').split('\n').filter((m) => m === 'work on hx-1')).toHaveLength(1)
    // host-a's finished work is kept on the remote, not lost
    expect(g(f.bare, 'show', 'refs/helix/preserved/hx-1/1:work/hx-1.txt')).toBe('done by host-a')
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('')
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
  }, 240_000)

  itFull('past --max-offline the run exits 4 with the attempt kept on a preserved ref', async () => {
    // --lease 15: the first renewal (a third into the lease, 5 s) finds the remote gone; its retry
    // 2 s later is past --max-offline, well before the lease (15 s) could run out instead
    const {f, dir, h} = await cutOnceStarted('host-p', ['--lease', '15', '--max-offline', '1'], {FLEET_SLEEP_MS: '60000'})
    expect(await h.done, h.out()).toBe(4)
    expect(h.out()).toMatch(/unreachable for more than 1s \(--max-offline\)/)
    // the attempt's uncommitted work is on a local preserved ref (pushed once the remote is back), its worktree gone
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
    expect(g(dir, 'log', '-1', '--format=%s', 'refs/helix/preserved/hx-1/1')).toBe('helix: uncommitted work of hx-1 attempt 1')
    expect(g(dir, 'show', 'refs/helix/preserved/hx-1/1:work/hx-1.partial')).toBe('started by host-p')
    expect(tipBeads(f.bare)[0]?.status).toBe('open')
    // the run's history says why it stopped: the remote was away, not an operator's signal
    const runs = readFileSync(path.join(dir, '.helix-logs', 'runs.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {stop_reason: string; exit_code: number; stop_message: string | null})
    expect(runs.at(-1)).toMatchObject({stop_reason: 'agent_unavailable', exit_code: 4})
    expect(runs.at(-1)?.stop_message).toMatch(/the remote origin was unreachable for more than 1s \(--max-offline\)/)
  }, 240_000)
})
