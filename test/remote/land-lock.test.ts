// The cross-host land lock (SPEC 20.3): refs/helix/land-lock as a lease ref on a real bare remote.
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {openRepo} from '../../src/git/repo.js'
import {gitEnv} from '../../src/git/run.js'
import {createRemoteLandLock, LAND_LOCK_REF} from '../../src/remote/land-lock.js'
import {bead, gitTestEnv, makeFleet, remoteRefs} from './helpers.js'

function lockOf(root: string, run: string, now: () => Date = () => new Date(), leaseSec = 30) {
  return createRemoteLandLock({repo: openRepo(root, gitEnv(gitTestEnv, {name: 'helix', email: 'helix@localhost'})), remote: 'origin', host: run, run, pid: process.pid, leaseSec, skewMs: 1000, now})
}

describe('remote land lock', () => {
  it('one run holds it; another waits its turn and takes it once it is released', async () => {
    const f = makeFleet([bead('hx-1')])
    const a = lockOf(f.clone('a'), 'run-a')
    const b = lockOf(f.clone('b'), 'run-b')
    const la = await a.acquire()
    if (!la.ok) throw new Error(la.message)
    expect(remoteRefs(f.bare)).toEqual([LAND_LOCK_REF])
    expect(await b.heldByOther()).toBe(true)
    expect(await a.heldByOther()).toBe(false)
    let bGot = false
    const pb = b.acquire().then((r) => ((bGot = true), r))
    // b keeps asking while a holds it (its turn comes only after the release)
    await new Promise((r) => setTimeout(r, 600))
    expect(bGot).toBe(false)
    await a.release(la.lock)
    const lb = await pb
    if (!lb.ok) throw new Error(lb.message)
    expect(await a.heldByOther()).toBe(true)
    await b.release(lb.lock)
    expect(remoteRefs(f.bare)).toEqual([])
  })

  it('a lock left by a dead host is taken over once it expired past the skew allowance; a stop ends the wait', async () => {
    const f = makeFleet([bead('hx-1')])
    const dead = lockOf(f.clone('a'), 'run-dead', () => new Date(), 3)
    const held = await dead.acquire()
    if (!held.ok) throw new Error(held.message)
    // the dead host's renewals never come (stop its timer without deleting the ref)
    held.lock.held = false
    await dead.release(held.lock)
    expect(remoteRefs(f.bare)).toEqual([LAND_LOCK_REF])
    const ac = new AbortController()
    const waiting = lockOf(f.clone('c'), 'run-c').acquire(ac.signal)
    ac.abort('SIGTERM')
    expect(await waiting).toMatchObject({ok: false, why: 'aborted'})
    const later = lockOf(path.join(f.dir, 'b'), 'run-b', () => new Date(Date.now() + 5000))
    f.clone('b')
    const lb = await later.acquire()
    if (!lb.ok) throw new Error(lb.message)
    await later.release(lb.lock)
    expect(remoteRefs(f.bare)).toEqual([])
  })
})
