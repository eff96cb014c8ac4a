// SPEC 20.2 across two crashes (session 35's kill soak): a --remote host killed before its
// landing push is restarted; the restart adopts the closed attempt (its claim renewed, now
// under the restart's run id) and is killed at the same point. The third run used to judge
// the claim "taken over by another run" (the attempt's record still named the first run):
// the finished work went to a preserved ref and, once the claim expired, the agent did the
// bead again. Now the adoption records the run that holds the claim, and the third run
// finishes the attempt without the agent. Two kills of the built CLI and leases: stress-only.
// Second: a restart with two attempts to finish takes both claims back at its start, so the
// second is renewed while the first one's land check runs (a check or a resolve may take longer
// than the lease; the second claim then expired and another host did its bead again).
// Third: killed right after that early renewal, the next start still finishes the attempt
// (the record names the renewing run before the renewal is pushed).
import {existsSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {killingGit} from '../support/git-shim.js'
import {bead, g, makeFleet} from './helpers.js'
import {events, fleetProblems, startHost, tipBeads} from './fleet-harness.js'
import {waitFor} from '../support/wait.js'

const itFull = STRESS_FULL ? it : it.skip
const ATOMIC_PUSH = '*" push "*"--atomic"*'

describe('a --remote host killed twice before its landing push', () => {
  itFull('the second restart still finishes the attempt: the agent runs once', async () => {
    const f = makeFleet([bead('b1')])
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('hA')
    const shim = killingGit({match: ATOMIC_PUSH, times: 2})
    const args = ['--workers', '2', '--lease', '10']
    const env = {PATH: shim.path(), FLEET_SLEEP_MS: '50'}
    const first = startHost(dir, 'hA', log, args, env)
    await first.done
    const second = startHost(dir, 'hA', log, args, env)
    await second.done
    expect(shim.fired(), first.out() + second.out()).toBe(2)
    expect(second.out(), first.out() + '\n---\n' + second.out()).toMatch(/resuming b1 attempt 1 after a crash/)

    const third = startHost(dir, 'hA', log, args)
    expect(await third.done, third.out()).toBe(0)
    const out = third.out()
    expect(out).toMatch(/resuming b1 attempt 1 after a crash/)
    expect(out).not.toMatch(/took its claim over|took over the expired claim/)
    expect(events(log).filter((e) => e.event === 'start'), out).toHaveLength(1)
    expect(fleetProblems(f.bare, ['b1'], log, 10_000), out).toEqual([])
    expect(tipBeads(f.bare).map((b) => b.status)).toEqual(['closed'])
    expect(g(dir, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
  }, 120_000)

  itFull('a restart with two attempts to finish renews both claims before it finishes the first', async () => {
    const ids = ['b1', 'b2']
    const f = makeFleet(ids.map((id) => bead(id)))
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('hA')
    const shim = killingGit({match: ATOMIC_PUSH})
    const args = ['--workers', '2', '--lease', '10']
    const first = startHost(dir, 'hA', log, args, {PATH: shim.path(), FLEET_SLEEP_MS: '50', FLEET_BARRIER_DIR: path.join(f.dir, 'barrier'), FLEET_BARRIER_N: '2'})
    await first.done
    expect(shim.fired(), first.out()).toBe(1)
    const runOf = (id: string): string => String(JSON.parse(g(f.bare, 'log', '-1', '--format=%B', `refs/helix/claims/${id}`)).run)
    const before = runOf('b1')
    expect(runOf('b2')).toBe(before)

    // the restart's land check waits for the gate: the first attempt it finishes holds there
    const checking = path.join(f.dir, 'checking')
    const gate = path.join(f.dir, 'gate')
    const again = startHost(dir, 'hA', log, [...args, '--land-check', `: > '${checking}'; while [ ! -e '${gate}' ]; do sleep 0.05; done`])
    await waitFor(() => existsSync(checking), 60_000)
    const during = ids.map(runOf)
    writeFileSync(gate, '')
    expect(await again.done, again.out()).toBe(0)
    // both claims were this run's while the first attempt was still being finished
    expect(during.filter((r) => r === before), again.out()).toEqual([])
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(2)
    expect(fleetProblems(f.bare, ids, log, 10_000), again.out()).toEqual([])
    expect(tipBeads(f.bare).map((b) => b.status)).toEqual(['closed', 'closed'])
  }, 120_000)

  itFull('killed right after the restart renewed the claim: the next start still finishes the attempt', async () => {
    const f = makeFleet([bead('b1')])
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('hA')
    const armed = path.join(f.dir, 'armed')
    // run 1: killed before its landing push; run 2 (armed): killed just after its first renewal of b1's claim
    const shim = killingGit({match: ATOMIC_PUSH}, {match: '*" push "*"--force-with-lease=refs/helix/claims/b1:"[0-9a-f]*', after: true, armed})
    const args = ['--workers', '2', '--lease', '10']
    const env = {PATH: shim.path(), FLEET_SLEEP_MS: '50'}
    const first = startHost(dir, 'hA', log, args, env)
    await first.done
    expect(shim.fired(0), first.out()).toBe(1)
    writeFileSync(armed, '')
    const second = startHost(dir, 'hA', log, args, env)
    await second.done
    expect(existsSync(armed), second.out()).toBe(false)

    const third = startHost(dir, 'hA', log, args)
    expect(await third.done, third.out()).toBe(0)
    expect(third.out()).toMatch(/resuming b1 attempt 1 after a crash/)
    expect(events(log).filter((e) => e.event === 'start'), third.out()).toHaveLength(1)
    expect(fleetProblems(f.bare, ['b1'], log, 10_000), third.out()).toEqual([])
    expect(tipBeads(f.bare).map((b) => b.status)).toEqual(['closed'])
  }, 120_000)
})
