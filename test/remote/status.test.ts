// `helix status --remote` (SPEC 19.5) on a real bare remote.
import {describe, expect, it} from 'vitest'
import {createClaims} from '../../src/remote/claim-refs.js'
import {fleetView, renderFleet} from '../../src/operator/fleet.js'
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

describe('the fleet view fits its pane (issue 29)', () => {
  const view = {
    remote: 'origin',
    base: 'main',
    tip: '0123456789abcdef0123',
    counts: {total: 9, open: 3, claimed: 2, in_progress: 0, closed: 4, blocked: 0},
    claims: [
      {bead: 'hx-12', title: 'Parse the configuration file and report every bad key', host: 'host-b', run: 'r', attempt: 1, claimed_at: null, expires_at: '', age_s: 75, expires_in_s: 300, state: 'live' as const, pr_url: null},
      {bead: 'hx-13', title: 'Short', host: 'host-a', run: 'r', attempt: 1, claimed_at: null, expires_at: '', age_s: 10, expires_in_s: 290, state: 'live' as const, pr_url: null},
    ],
    hosts: ['host-a', 'host-b'],
    lease_s: 300,
    pull_requests: [],
  }

  it('a 39-column pane: every line within 39 columns, the expiry whole on a line of its own', () => {
    const lines = renderFleet(view, {width: 39, height: 30}).trimEnd().split('\n')
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(39)
    expect(lines).toContain('hx-12 by host-b')
    expect(lines).toContain('  expires in 5m')
    expect(lines.filter((l) => /expires in/.test(l))).toHaveLength(2)
  })

  it('a pipe or a file (no width): whole lines, as before', () => {
    const text = renderFleet(view)
    expect(text).toContain('hx-12 claimed by host-b (expires in 5m, age 75s): Parse the configuration file and report every bad key\n')
  })
})
