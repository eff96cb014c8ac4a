/**
 * `helix recover <id>` (SPEC 13.3): release one named claim whose claimer is not live by
 * pid evidence, even when the age rule keeps it (a claimed-at in the future); refuse in
 * one line, exit 1, nothing changed, when it is live or cannot be checked. Each command
 * runs in-process (test/support/in-process.ts); recover.e2e.test.ts spawns the CLI.
 */
import {spawn, spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {hostname} from 'node:os'
import path from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {startTokenOf} from '../../src/proc/process-probe.js'
import {processesOfDispatch} from '../../src/proc/tagged.js'
import {trackProcess} from '../support/tmp.js'
import {helixInProcess} from '../support/in-process.js'
import {project, sleeper, waitFor} from './helpers.js'

/**
 * `helix recover` first ends any dead run's leftover agents on this host (SPEC 14.5) and
 * says so; tests in other files running in parallel may leave such leftovers, so those
 * lines are not this test's output.
 */
async function helix(...a: Parameters<typeof helixInProcess>): ReturnType<typeof helixInProcess> {
  const r = await helixInProcess(...a)
  return {...r, stdout: r.stdout.split('\n').filter((l) => !/leftover agent process\(es\) of dead run/.test(l)).join('\n')}
}

const future = () => new Date(Date.now() + 24 * 3600_000).toISOString()
const deadPid = () => spawnSync('true').pid!

function claim(id: string, fields: Record<string, unknown>) {
  return {id, title: id, status: 'in_progress', owner: 'helix', 'claimed-at': future(), 'claimed-machine': hostname(), ...fields}
}

function setup(beads: Array<Record<string, unknown>>) {
  const root = project({beads: beads as never})
  const file = path.join(root, '.ddx', 'beads.jsonl')
  const read = () => Object.fromEntries(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => [JSON.parse(l).id, JSON.parse(l)]))
  return {root, file, read, bytes: () => readFileSync(file)}
}

describe('helix recover <id>', () => {
  it('a future claimed-at with a dead pid: plain recover keeps it (no age evidence), --dry-run names it, recover <id> releases it', async () => {
    const t = setup([claim('hx-fut', {'claimed-pid': deadPid(), 'claim-token': 'tokfut'}), claim('hx-keep', {'claimed-pid': deadPid()})])
    const before = t.bytes()
    const all = await helix(t.root, ['recover'])
    expect(all.code).toBe(0)
    expect(all.stdout).toContain('helix: no orphaned claims to recover')
    const dry = await helix(t.root, ['recover', '--dry-run', 'hx-fut'])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/^helix: would release hx-fut \(claimed-at \S+ is in the future; pid=\d+ not running\)\n$/)
    expect(t.bytes().equals(before)).toBe(true)
    const r = await helix(t.root, ['recover', 'hx-fut'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toMatch(/^helix: released hx-fut \(claimed-at \S+ is in the future; pid=\d+ not running\)\n$/)
    const after = t.read()
    expect(after['hx-fut'].status).toBe('open')
    for (const k of ['owner', 'claimed-at', 'claimed-pid', 'claimed-machine', 'claim-token']) expect(after['hx-fut'][k]).toBeUndefined()
    // only the named bead
    expect(after['hx-keep'].status).toBe('in_progress')
    // again: nothing to do, said once
    const again = await helix(t.root, ['recover', 'hx-fut'])
    expect([again.code, again.stdout]).toEqual([0, 'helix: hx-fut is not claimed (status open); nothing to recover\n'])
  })

  it('an old claim with a reused pid (another start token) is released too', async () => {
    const s = sleeper()
    const t = setup([claim('hx-reused', {'claimed-pid': s.pid, 'claimed-start': 'not-its-token', 'claimed-at': new Date(Date.now() - 60_000).toISOString()})])
    const r = await helix(t.root, ['recover', 'hx-reused'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`helix: released hx-reused (pid=${s.pid} now belongs to another process)\n`)
    expect(t.read()['hx-reused'].status).toBe('open')
  })
})

// a live claimer is refused in one line, exit 1, the file byte for byte unchanged: one
// claim per `it` (two CLI calls each) on one tracker made in beforeAll
describe('helix recover <id>: a live claimer is refused in one line, exit 1, the file byte for byte unchanged', () => {
  let t: ReturnType<typeof setup>
  let before: Buffer
  let line: Record<string, string>
  beforeAll(async () => {
    const s = sleeper()
    // a process carrying the claim's dispatch id, with its run pid unrecorded (never taken for a dead run's leftover)
    const tagged = trackProcess(spawn('sleep', ['300'], {detached: true, stdio: 'ignore', env: {...process.env, HELIX_DISPATCH_ID: 'toklive.1'}}), {group: true})
    tagged.unref()
    await waitFor(() => processesOfDispatch('toklive', {prefix: true}).length > 0)
    t = setup([
      claim('hx-alive', {'claimed-pid': s.pid, 'claimed-start': startTokenOf(s.pid!)}),
      claim('hx-agent', {'claimed-pid': deadPid(), 'claim-token': 'toklive'}),
      claim('hx-far', {'claimed-pid': deadPid(), 'claimed-machine': 'some-other-host'}),
      claim('hx-nopid', {}),
      claim('hx-alice', {'claimed-pid': deadPid(), owner: 'alice'}),
    ])
    before = t.bytes()
    line = {
      'hx-alive': `helix: not releasing hx-alive: claimed by PID ${s.pid} which is still alive\n`,
      'hx-agent': 'helix: not releasing hx-agent: a process of its dispatch (HELIX_DISPATCH_ID toklive.*) is still running\n',
      'hx-far': "helix: not releasing hx-far: it was claimed on host some-other-host, whose processes cannot be checked from here; release it with 'helix tracker update hx-far --unclaim' once you know its claimer is gone\n",
      'hx-nopid': "helix: not releasing hx-nopid: the claim records no claimed-pid, so there is no pid evidence; release it with 'helix tracker update hx-nopid --unclaim' once you know its claimer is gone\n",
      'hx-alice': "helix: not releasing hx-alice: it is claimed by alice, not helix (HELIX_OWNER); release it with 'helix tracker update hx-alice --unclaim'\n",
    }
  })

  it.each(['hx-alive', 'hx-agent', 'hx-far', 'hx-nopid', 'hx-alice'])('%s', async (id) => {
    const r = await helix(t.root, ['recover', id])
    expect([id, r.code, r.stdout, r.stderr]).toEqual([id, 1, '', line[id]])
    // --dry-run refuses the same way
    expect((await helix(t.root, ['recover', '--dry-run', id])).code).toBe(1)
    expect(t.bytes().equals(before)).toBe(true)
  })
})

describe('helix recover <id>: arguments', () => {
  it("unknown ids and stray arguments are one line, exit 1; an id beginning with '-' works after --", async () => {
    const t = setup([claim('-dash', {'claimed-pid': deadPid()})])
    const before = t.bytes()
    expect(await helix(t.root, ['recover', 'hx-nope'])).toEqual({code: 1, stdout: '', stderr: "helix: unknown bead 'hx-nope'\n"})
    expect(await helix(t.root, ['recover', 'hx-nope\u001b[2J'])).toEqual({code: 1, stdout: '', stderr: "helix: unknown bead 'hx-nope?[2J'\n"})
    expect(await helix(t.root, ['recover', 'a', 'b'])).toEqual({code: 1, stdout: '', stderr: "helix recover: unexpected argument 'b'\n"})
    expect((await helix(t.root, ['recover', '-dash'])).code).toBe(1)
    expect(await helix(t.root, ['recover', '--worktrees', 'x'])).toEqual({code: 1, stdout: '', stderr: 'helix: --worktrees takes no bead id\n'})
    expect(t.bytes().equals(before)).toBe(true)
    const r = await helix(t.root, ['recover', '--', '-dash'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^helix: released -dash \(claimed-at \S+ is in the future; pid=\d+ not running\)\n$/)
    expect(t.read()['-dash'].status).toBe('open')
  })
})
