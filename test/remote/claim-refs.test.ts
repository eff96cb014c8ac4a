// Claims as lease refs on a real bare remote (SPEC 19.1), several clones as hosts.
import {describe, expect, it} from 'vitest'
import {claimRef, claimState, createClaims, parseClaimMessage, type ClaimsOptions} from '../../src/remote/claim-refs.js'
import {parsePorcelain} from '../../src/remote/push.js'
import {g, gitTestEnv, makeFleet, remoteRefs} from './helpers.js'

function claimsFor(cwd: string, host: string, over: Partial<ClaimsOptions> = {}) {
  return createClaims({cwd, remote: 'origin', env: gitTestEnv, host, run: `run-${host}`, pid: 100, leaseSec: 10, now: () => new Date(), ...over})
}

describe('claims on a bare remote', () => {
  it('of several hosts creating one claim at once, exactly one wins; the rest lose the race', async () => {
    const f = makeFleet()
    const hosts = ['a', 'b', 'c', 'd'].map((h) => claimsFor(f.clone(h), h))
    const results = await Promise.all(hosts.map((c) => c.create('hx-1', 1)))
    expect(results.filter((r) => r.ok)).toHaveLength(1)
    for (const r of results.filter((x) => !x.ok)) expect(r).toMatchObject({ok: false, why: 'lost'})
    const winner = results.findIndex((r) => r.ok)
    const listed = await hosts[0]!.list()
    expect(listed).toHaveLength(1)
    expect(listed![0]).toMatchObject({bead: 'hx-1', sha: (results[winner] as {sha: string}).sha})
    expect(listed![0]!.message?.host).toBe(['a', 'b', 'c', 'd'][winner])
    expect(claimState(listed![0]!, new Date())).toBe('live')
  })

  it('renewal moves the ref only from our value; a stale renewal is refused; release deletes it', async () => {
    const f = makeFleet()
    const a = claimsFor(f.clone('a'), 'a')
    const b = claimsFor(f.clone('b'), 'b')
    const c1 = await a.create('hx-2', 1)
    if (!c1.ok) throw new Error('create failed')
    const c2 = await a.renew('hx-2', c1.sha, 1)
    expect(c2.ok).toBe(true)
    if (!c2.ok) return
    expect(c2.sha).not.toBe(c1.sha)
    expect(await a.renew('hx-2', c1.sha, 1)).toMatchObject({ok: false, why: 'lost'})
    expect(await b.release('hx-2', c1.sha)).toMatchObject({ok: false, why: 'lost'})
    expect((await b.list())!.map((x) => x.sha)).toEqual([c2.sha])
    expect(await a.release('hx-2', c2.sha)).toMatchObject({ok: true})
    expect(remoteRefs(f.bare)).toEqual([])
  })

  it('an expired claim is takeable only past the skew allowance, and only from its old value', async () => {
    const f = makeFleet()
    let now = Date.parse('2026-01-01T00:00:00Z')
    const a = claimsFor(f.clone('a'), 'a', {now: () => new Date(now)})
    const b = claimsFor(f.clone('b'), 'b', {now: () => new Date(now)})
    const c1 = await a.create('hx-3', 1)
    if (!c1.ok) throw new Error('create failed')
    const [seen] = (await b.list())!
    expect(claimState(seen!, new Date(now + 5_000))).toBe('live')
    expect(claimState(seen!, new Date(now + 30_000))).toBe('expired')
    expect(claimState(seen!, new Date(now + 71_000))).toBe('takeable')
    now += 71_000
    const t = await b.takeOver('hx-3', seen!.sha, 2)
    expect(t.ok).toBe(true)
    // the old owner's renewal and release now fail: its value is gone
    expect(await a.renew('hx-3', c1.sha, 1)).toMatchObject({ok: false, why: 'lost'})
    expect(await a.release('hx-3', c1.sha)).toMatchObject({ok: false, why: 'lost'})
    const [now2] = (await a.list())!
    expect(now2!.message).toMatchObject({host: 'b', attempt: 2})
  })

  it('a claim with a message that is not a claim object is live for one lease from its commit time', async () => {
    const f = makeFleet()
    const host = f.clone('a')
    const tree = g(host, 'hash-object', '-t', 'tree', '-w', '/dev/null')
    const sha = g(host, 'commit-tree', '-m', 'not json \x1b[31m', tree)
    g(host, 'push', '-q', 'origin', `${sha}:${claimRef('hx-4')}`)
    const [c] = (await claimsFor(f.clone('b'), 'b').list())!
    expect(c!.message).toBeNull()
    expect(c!.expiresAt.getTime() - c!.committedAt.getTime()).toBe(10_000)
    expect(claimState(c!, new Date(c!.committedAt.getTime() + 5_000))).toBe('live')
    expect(claimState(c!, new Date(c!.committedAt.getTime() + 80_000))).toBe('takeable')
  })

  it('an unreachable remote is reported as such, never as a lost race', async () => {
    const f = makeFleet()
    const host = f.clone('a')
    g(host, 'remote', 'set-url', 'origin', `${f.dir}/nowhere.git`)
    const c = claimsFor(host, 'a')
    expect(await c.create('hx-5', 1)).toMatchObject({ok: false, why: 'unreachable'})
    expect(await c.list()).toBeNull()
  })

  it('parses claim messages strictly and porcelain lines by flag', () => {
    expect(parseClaimMessage('{"host":"h","run":"r","pid":1,"attempt":1,"claimed_at":"2026-01-01T00:00:00Z","expires_at":"2026-01-01T00:05:00Z"}')).toMatchObject({host: 'h'})
    expect(parseClaimMessage('{"host":"h","run":"r","pid":"1","attempt":1,"claimed_at":"x","expires_at":"y"}')).toBeNull()
    expect(parseClaimMessage('[]')).toBeNull()
    const p = parsePorcelain({code: 1, stdout: 'To /r.git\n!\tabc:refs/helix/claims/x\t[rejected] (stale info)\n \tdef:refs/heads/main\tabc..def\nDone\n', stderr: 'error: failed to push'})
    expect(p.ok).toBe(false)
    expect(p.ok ? null : p.kind).toBe('race')
    expect(p.refs.map((r) => [r.flag, r.to])).toEqual([['!', 'refs/helix/claims/x'], [' ', 'refs/heads/main']])
  })
})

async function fleetOn(a: string, lines: string[]) {
  const {createFleet} = await import('../../src/remote/fleet.js')
  return createFleet({
      root: a,
      remote: 'origin',
      base: 'main',
      trackerRel: '.ddx/beads.jsonl',
      scratch: `${a}/.git/helix-remote`,
      env: gitTestEnv,
      host: 'a',
      runId: 'run-a',
      pid: process.pid,
      leaseSec: 30,
      maxOfflineSec: 3600,
      now: () => new Date(),
      log: (l) => lines.push(l),
      pidAlive: () => true,
      onMaxOffline: () => {},
    })
}

const openBead = (id: string) => ({id, title: id, status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z'})

describe('the fleet tracker', () => {
  it('writes an attempt\'s spend, notes and count as ONE commit on the base when it ends (SPEC 20.1)', async () => {
    const f = makeFleet([openBead('b1'), openBead('b2')])
    const a = f.clone('a')
    const fleet = await fleetOn(a, [])
    try {
      const before = g(f.bare, 'rev-list', '--count', 'main')
      const c = await fleet.tracker.claim('b1')
      expect(c.ok).toBe(true)
      await fleet.tracker.addSpend('b1', 1200, 0.5)
      await fleet.tracker.appendNote('b1', 'a note of the attempt')
      await fleet.tracker.addLabel('b1', 'flaky')
      // another bead's edit is not put off
      await fleet.tracker.appendNote('b2', 'about b2')
      expect(Number(g(f.bare, 'rev-list', '--count', 'main'))).toBe(Number(before) + 1)
      await fleet.endAttempt('b1', {reason: 'failed', count: true, note: 'NOT LANDED [2026-01-01T00:00:00.000Z]: failed'})
      await fleet.release('b1')
      expect(Number(g(f.bare, 'rev-list', '--count', 'main'))).toBe(Number(before) + 2)
      const b1 = JSON.parse(g(f.bare, 'show', 'main:.ddx/beads.jsonl').split('\n')[0] as string) as Record<string, unknown>
      expect(b1).toMatchObject({'helix-attempts': 1, 'helix-tokens': 1200, labels: ['flaky']})
      expect(String(b1.notes)).toContain('a note of the attempt')
      expect(String(b1.notes)).toContain('NOT LANDED [2026-01-01T00:00:00.000Z]: failed')
      // the loop's reopen with that note writes nothing more
      await fleet.tracker.reopen('b1', 'NOT LANDED [2026-01-01T00:00:01.000Z]: failed')
      expect(Number(g(f.bare, 'rev-list', '--count', 'main'))).toBe(Number(before) + 2)
      expect(remoteRefs(f.bare, 'refs/helix/claims/')).toEqual([])
    } finally {
      await fleet.close()
    }
  })
})

describe('a ref in the way of a claim (issue 30)', () => {
  it('is named as what it is, blamed on no host, and the bead is reported blocked (not retried)', async () => {
    const f = makeFleet([openBead('b3')])
    const other = f.clone('other')
    g(other, 'push', '-q', 'origin', 'HEAD:refs/helix/claims/b3/x')
    const a = f.clone('a')
    const lines: string[] = []
    const fleet = await fleetOn(a, lines)
    try {
      await fleet.tracker.read()
      const c = await fleet.tracker.claim('b3')
      expect(c).toMatchObject({ok: false, blocked: true})
      const msg = c.ok ? '' : c.message
      expect(msg).toContain('refs/helix/claims/b3/x')
      expect(msg).toContain('git push origin :refs/helix/claims/b3/x')
      expect(msg).not.toMatch(/another host/)
      expect(fleet.strays().get('b3')).toBe('refs/helix/claims/b3/x')
      expect(lines.join('\n')).not.toMatch(/unreachable/)
      // the stray ref is still there: helix removes nothing it did not make
      expect(remoteRefs(f.bare)).toEqual(['refs/helix/claims/b3/x'])
    } finally {
      await fleet.close()
    }
  })
})
