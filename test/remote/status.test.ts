// `helix status --remote` (SPEC 19.5) on a real bare remote.
import {describe, expect, it} from 'vitest'
import {createClaims} from '../../src/remote/claims.js'
import {fleetView, renderFleet} from '../../src/status/fleet.js'
import {bead, g, gitTestEnv, makeFleet} from './helpers.js'

describe('status --remote', () => {
  it('one row per claim naming its host, queue counts at the remote tip, hosts active in the lease period; remote strings sanitized', async () => {
    const f = makeFleet([bead('hx-1', {title: 'fix \x1b[31mred\x1b[0m'}), bead('hx-2'), bead('hx-3', {status: 'closed'})])
    const b = f.clone('b')
    const now = Date.now()
    const claims = createClaims({cwd: b, remote: 'origin', env: gitTestEnv, host: 'host-b\x1b[2J', run: 'r1', pid: 1, leaseSec: 240, now: () => new Date(now)})
    expect((await claims.create('hx-1', 1)).ok).toBe(true)
    const a = f.clone('a')
    const v = await fleetView({root: a, remote: 'origin', env: gitTestEnv, leaseSec: 300, now: new Date(now + 60_000)})
    expect(v.counts).toMatchObject({total: 3, open: 1, claimed: 1, closed: 1})
    expect(v.claims).toHaveLength(1)
    expect(v.claims[0]).toMatchObject({bead: 'hx-1', host: 'host-b\x1b[2J', attempt: 1, age_s: 60, expires_in_s: 180, state: 'live'})
    const text = renderFleet(v)
    expect(text).not.toMatch(/\x1b/)
    expect(text).toMatch(/^hx-1 claimed by host-b.*\(expires in 3m, age 60s\): fix .*red/m)
    expect(text).toMatch(/^fleet origin\/main at [0-9a-f]{12}: 3 beads — 1 open, 1 claimed, 1 closed$/m)
    expect(text).toMatch(/^hosts active in the last 5m: host-b/m)
    // nothing written to the remote by looking
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)').split('\n')).toEqual(['refs/heads/main', 'refs/helix/claims/hx-1'])
  })
})
