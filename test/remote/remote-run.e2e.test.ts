// `helix run --remote` through the built CLI (npm run build first): two hosts, one queue.
// Bad input is refused in-process (run-refusals.test.ts); `status --remote` here too.
import {spawnSync} from 'node:child_process'
import {readFileSync, rmSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'
import {bead, g, makeFleet, remoteRefs} from './helpers.js'
import {cloneBehindLink, events, fleetProblems, startHost, tipBeads, until} from './fleet-harness.js'

describe('helix run --remote (built CLI)', () => {
  // one scenario for two paths that were two runs: the fleet's drain (SPEC 19) and the land
  // check on every --remote candidate (SPEC 20.3), with every agent at a barrier so that the
  // hosts land at about the same moment
  it('two hosts with two workers each drain one queue with a land check: every bead closed and landed once, checked, no claim left, no red base', async () => {
    const ids = ['hx-1', 'hx-2', 'hx-3', 'hx-4']
    const f = makeFleet(ids.map((id) => bead(id)))
    const log = path.join(f.dir, 'agents.jsonl')
    // a check with a verdict on the tree: every work file is a finished one (the agent writes "done by")
    const check = 'for w in work/*.txt; do [ -e "$w" ] || continue; grep -q "^done by" "$w" || { echo "unfinished $w"; exit 1; }; done; echo checked'
    const dirs = ['host-a', 'host-b'].map((h) => f.clone(h))
    const barrier = path.join(f.dir, 'barrier')
    const hosts = ['host-a', 'host-b'].map((h, i) =>
      startHost(dirs[i] as string, h, log, ['--workers', '2', '--lease', '10', '--land-check', check], {FLEET_SLEEP_MS: '300', FLEET_BARRIER_DIR: barrier, FLEET_BARRIER_N: '4', FLEET_BARRIER_MS: '15000'}),
    )
    const codes = await Promise.all(hosts.map((h) => h.done))
    const out = hosts.map((h) => h.out()).join('\n----\n')
    expect(codes, out).toEqual([0, 0])
    expect(fleetProblems(f.bare, ids, log, 10_000)).toEqual([])
    // every bead was worked by some host, none twice to completion
    expect(new Set(events(log).filter((e) => e.event === 'end').map((e) => e.bead))).toEqual(new Set(ids))
    // every landing was checked, none red
    expect(out.match(/land check passed/g)?.length ?? 0).toBeGreaterThanOrEqual(ids.length)
    expect(out).not.toMatch(/land check FAILED/)
    expect(remoteRefs(f.bare).filter((r) => !r.startsWith('refs/helix/preserved/') && !r.startsWith('refs/helix/runs/'))).toEqual([])
    // the run history record names the host (SPEC 19.5)
    const runs = readFileSync(path.join(dirs[0] as string, '.helix-logs', 'runs.jsonl'), 'utf8').trim().split('\n')
    expect(JSON.parse(runs.at(-1) as string)).toMatchObject({host: 'host-a', remote: 'origin'})
    // the fleet as status --remote shows it: no claim left, all closed, both hosts active
    const st = await helixInProcess(dirs[0] as string, ['status', '--remote', 'origin', '--json'], GIT_ISOLATION)
    expect(st.code, st.stderr).toBe(0)
    const view = JSON.parse(st.stdout) as {counts: {closed: number}; claims: unknown[]; hosts: string[]}
    expect(view).toMatchObject({counts: {closed: ids.length}, claims: [], hosts: ['host-a', 'host-b']})
    // no red base: the check passes on every commit the base ever pointed through
    const walk = f.clone('walk')
    for (const sha of g(walk, 'rev-list', 'origin/main').split('\n')) {
      g(walk, 'checkout', '-q', '--detach', sha)
      expect(spawnSync('sh', ['-c', check], {cwd: walk, encoding: 'utf8'}).status, sha).toBe(0)
    }
  }, 240_000)

  it('a finished attempt whose remote is gone when it lands waits for it and lands once it answers: the agent runs once, nothing is counted', async () => {
    const f = makeFleet([bead('hx-1')])
    const {dir, link} = cloneBehindLink(f, 'host-w')
    const log = path.join(f.dir, 'agents.jsonl')
    // the lease (60 s) and --max-offline (600 s) outlast the test: only the remote's return ends the wait
    const h = startHost(dir, 'host-w', log, ['--lease', '60', '--max-offline', '600'], {FLEET_SLEEP_MS: '1500'})
    await until(() => events(log).some((e) => e.event === 'start'), 60_000, 'the agent to start')
    rmSync(link)
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

  it('a finished attempt whose lease runs out while the remote is away still lands once it answers, when no host took the bead over: the agent runs once (SPEC 20.1, 20.2)', async () => {
    const f = makeFleet([bead('hx-1')])
    const {dir, link} = cloneBehindLink(f, 'host-e')
    const log = path.join(f.dir, 'agents.jsonl')
    // --lease 3: the partition outlasts it; --max-offline 600 outlasts the test
    const h = startHost(dir, 'host-e', log, ['--lease', '3', '--max-offline', '600'], {FLEET_SLEEP_MS: '1000'})
    await until(() => events(log).some((e) => e.event === 'start'), 60_000, 'the agent to start')
    rmSync(link)
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

  it('a finished attempt whose lease ran out while the remote was away, and which another host took over and landed meanwhile, lands nothing when the remote answers: the bead is closed once, the work kept, nothing counted', async () => {
    const f = makeFleet([bead('hx-1')])
    const {dir, link} = cloneBehindLink(f, 'host-a')
    const log = path.join(f.dir, 'agents.jsonl')
    const a = startHost(dir, 'host-a', log, ['--lease', '3', '--max-offline', '600'], {FLEET_SLEEP_MS: '500', HELIX_LEASE_SKEW: '1'})
    await until(() => events(log).some((e) => e.event === 'start'), 60_000, 'the agent to start')
    rmSync(link)
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

  it('killed -9 while its landing waits for the remote, then restarted once the remote is back: the attempt lands without running the agent again', async () => {
    const f = makeFleet([bead('hx-1')])
    const {dir, link} = cloneBehindLink(f, 'host-k')
    const log = path.join(f.dir, 'agents.jsonl')
    const args = ['--lease', '60', '--max-offline', '600']
    const h = startHost(dir, 'host-k', log, args, {FLEET_SLEEP_MS: '1000'})
    await until(() => events(log).some((e) => e.event === 'start'), 60_000, 'the agent to start')
    rmSync(link)
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

  it('past --max-offline the run exits 4 with the attempt kept on a preserved ref', async () => {
    const f = makeFleet([bead('hx-1')])
    const {dir, link} = cloneBehindLink(f, 'host-p')
    const log = path.join(f.dir, 'agents.jsonl')
    // --lease 15: the first renewal (a third into the lease, 5 s) finds the remote gone; its retry
    // 2 s later is past --max-offline, well before the lease (15 s) could run out instead
    const h = startHost(dir, 'host-p', log, ['--lease', '15', '--max-offline', '1'], {FLEET_SLEEP_MS: '60000'})
    await until(() => events(log).some((e) => e.event === 'start'), 60_000, 'the agent to start')
    rmSync(link)
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
