// The remote tracker and landing ports (SPEC 19.2) on a real bare remote, in process.
import {execFileSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {createFleet} from '../../src/remote/fleet.js'
import {createRemoteLanding} from '../../src/landing/remote.js'
import type {Workspace} from '../../src/loop/ports.js'
import {closeBead} from '../../src/tracker/ops.js'
import {bead, g, gitTestEnv, makeFleet, remoteRefs} from './helpers.js'
import {GIT_POLL_MS, waitFor} from '../support/wait.js'

function host(root: string, name: string, leaseSec = 30, env: NodeJS.ProcessEnv = gitTestEnv) {
  const fleet = createFleet({
    root,
    remote: 'origin',
    base: 'main',
    trackerRel: '.ddx/beads.jsonl',
    scratch: path.join(root, '.git', 'helix-remote'),
    env,
    host: name,
    runId: `${name}-run`,
    pid: process.pid,
    leaseSec,
    maxOfflineSec: 3600,
    now: () => new Date(),
    log: () => {},
    pidAlive: () => true,
    onMaxOffline: () => {},
  })
  const local = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date()})
  const landing = createRemoteLanding({root, top: root, prefix: '', remote: 'origin', base: 'main', trackerRel: '.ddx/beads.jsonl', scratch: path.join(root, '.git', 'helix-remote'), host: name, pid: process.pid, fleet, local, now: () => new Date(), log: () => {}})
  return {fleet, landing}
}

/** what an agent does in its worktree: commit a file, close its bead in the worktree's tracker (fenced by the token) */
async function agentWork(ws: Workspace, token: string): Promise<void> {
  execFileSync('sh', ['-c', `echo work > ${ws.bead}.txt && git add -A && git -c user.name=a -c user.email=a@x commit -q -m "work on ${ws.bead}"`], {cwd: ws.dir, env: gitTestEnv})
  const dir = ws.trackerDir as string
  await closeBead({root: ws.dir, dir, file: path.join(dir, 'beads.jsonl'), lockDir: path.join(dir, 'beads.lock'), pidFile: '', runState: '', logDir: '', contextFile: ''}, ws.bead, {claimToken: token, targetId: ws.bead})
}

const tipBeads = (bare: string) =>
  g(bare, 'show', 'main:.ddx/beads.jsonl')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)

describe('remote landing', () => {
  it('lands an attempt as one push: the work and the closed bead on the remote base, no claim field, no claim ref', async () => {
    const f = makeFleet([bead('hx-1'), bead('hx-2')])
    const root = f.clone('a')
    const {fleet, landing} = host(root, 'a')
    await fleet.tracker.read()
    const c = await fleet.tracker.claim('hx-1')
    if (!c.ok) throw new Error(c.message)
    expect(remoteRefs(f.bare)).toEqual(['refs/helix/claims/hx-1'])
    // another host reads the bead as claimed
    const other = host(f.clone('b'), 'b')
    expect((await other.fleet.tracker.read()).byId.get('hx-1')?.status).toBe('in_progress')
    expect(await other.fleet.tracker.claim('hx-1')).toMatchObject({ok: false, message: expect.stringMatching(/^hx-1 claimed by a \(expires in \d+s\)$/)})
    const ws = await landing.prepare('hx-1', 1, 1)
    await agentWork(ws, c.token)
    // the worktree's copy is what this host reads for its own bead; the base still says open
    expect((await fleet.tracker.read()).byId.get('hx-1')?.status).toBe('closed')
    expect(tipBeads(f.bare)[0]?.status).toBe('open')
    const r = await landing.land(ws)
    expect(r).toMatchObject({landed: true})
    const beads = tipBeads(f.bare)
    expect(beads.map((b) => [b.id, b.status])).toEqual([['hx-1', 'closed'], ['hx-2', 'open']])
    expect(Object.keys(beads[0] as object).filter((k) => k.startsWith('claim') || k === 'owner')).toEqual([])
    expect(g(f.bare, 'log', '--format=%s', 'main')).toMatch(/^helix\(a\): tracker of hx-1 \(attempt 1\)\nwork on hx-1\nseed$/)
    // the root has the base checked out, clean and behind: fast-forwarded to the remote tip
    expect(g(root, 'rev-parse', 'main')).toBe(g(f.bare, 'rev-parse', 'main'))
    expect(remoteRefs(f.bare)).toEqual([])
    await fleet.close()
    await other.fleet.close()
  }, 180_000)

  it('two hosts landing at once both land (a non-fast-forward is fetched, rebased and retried)', async () => {
    const f = makeFleet([bead('hx-1'), bead('hx-2')])
    const roots = [f.clone('a'), f.clone('b')]
    const seed = g(roots[1] as string, 'rev-parse', 'main')
    // host b's operator has a change of their own in the checkout: its local base is left alone
    writeFileSync(path.join(roots[1] as string, 'README.md'), 'my edit\n')
    const hosts = roots.map((r, i) => host(r, i === 0 ? 'a' : 'b'))
    const wss = await Promise.all(
      hosts.map(async (h, i) => {
        const id = `hx-${i + 1}`
        const c = await h.fleet.tracker.claim(id)
        if (!c.ok) throw new Error(c.message)
        const ws = await h.landing.prepare(id, 1, 1)
        await agentWork(ws, c.token)
        return ws
      }),
    )
    const rs = await Promise.all(hosts.map((h, i) => h.landing.land(wss[i] as Workspace)))
    expect(rs.map((r) => r.landed)).toEqual([true, true])
    expect(tipBeads(f.bare).map((b) => b.status)).toEqual(['closed', 'closed'])
    const subjects = g(f.bare, 'log', '--format=%s', 'main').split('\n')
    for (const id of ['hx-1', 'hx-2']) expect(subjects.filter((s) => s === `work on ${id}`)).toHaveLength(1)
    expect(g(roots[1] as string, 'rev-parse', 'main')).toBe(seed)
    expect(g(roots[1] as string, 'status', '--porcelain')).toMatch(/^M README.md$/m)
    expect(remoteRefs(f.bare)).toEqual([])
    for (const h of hosts) await h.fleet.close()
  }, 180_000)

  it('a claim taken over meanwhile lands nothing: the base does not move, the work is kept on a preserved ref on the remote', async () => {
    const f = makeFleet([bead('hx-1')])
    const a = host(f.clone('a'), 'a')
    const c = await a.fleet.tracker.claim('hx-1')
    if (!c.ok) throw new Error(c.message)
    const ws = await a.landing.prepare('hx-1', 1, 1)
    await agentWork(ws, c.token)
    const before = g(f.bare, 'rev-parse', 'main')
    const b = host(f.clone('b'), 'b')
    const [claim] = (await b.fleet.claims.list())!
    expect((await b.fleet.claims.takeOver('hx-1', claim!.sha, 2)).ok).toBe(true)
    const r = await a.landing.land(ws)
    expect(r).toMatchObject({landed: false, reason: expect.stringContaining('taken over'), preservedRef: 'refs/helix/preserved/hx-1/1'})
    expect(g(f.bare, 'rev-parse', 'main')).toBe(before)
    expect(remoteRefs(f.bare).sort()).toEqual(['refs/helix/claims/hx-1', 'refs/helix/preserved/hx-1/1'])
    expect(g(f.bare, 'log', '--format=%s', 'refs/helix/preserved/hx-1/1', '-1')).toBe('work on hx-1')
    await a.fleet.close()
    await b.fleet.close()
  })

  it('tracker writes are commits pushed to the remote base by fast-forward', async () => {
    const f = makeFleet([bead('hx-1')])
    const a = host(f.clone('a'), 'a')
    await a.fleet.tracker.appendNote('hx-1', 'NOT LANDED [t]: conflict')
    await a.fleet.tracker.addLabel('hx-1', 'blocked')
    const [b] = tipBeads(f.bare)
    expect(b).toMatchObject({notes: 'NOT LANDED [t]: conflict', labels: ['blocked']})
    expect(g(f.bare, 'log', '--format=%s', 'main').split('\n')).toEqual(['helix(a): label blocked on hx-1', 'helix(a): note on hx-1', 'seed'])
    await a.fleet.close()
  })

  it('failed attempts are counted on the bead at the base: every host backs off, and the fourth blocks it fleet-wide', async () => {
    const f = makeFleet([bead('hx-1')])
    // an hour's backoff (HELIX_BACKOFF_SLEEP): the first one, 5 s, ran out before the checks below at load 30
    const env = {...gitTestEnv, HELIX_BACKOFF_SLEEP: '3600'}
    const a = host(f.clone('a'), 'a', 30, env)
    const b = host(f.clone('b'), 'b', 30, env)
    for (let n = 1; n <= 4; n++) {
      const c = await a.fleet.tracker.claim('hx-1')
      if (!c.ok) throw new Error(c.message)
      if (n === 1) {
        // another host's live claim is waited for, named without its lease end (the holder moves it)
        await b.fleet.tracker.read()
        expect(b.fleet.waiting()).toEqual([{until: expect.any(String), what: 'hx-1 claimed by a'}])
      }
      const ws = await a.landing.prepare('hx-1', n, 1)
      // the loop's FAILED path: unclaim first (deferred while the worktree exists), then preserve
      await a.fleet.tracker.unclaim('hx-1')
      expect(remoteRefs(f.bare)).toContain('refs/helix/claims/hx-1')
      await a.landing.preserve(ws, `rc=1: tests fail (attempt ${n})`)
      const [row] = tipBeads(f.bare)
      expect(row).toMatchObject({'helix-attempts': n, status: 'open'})
      expect(Date.parse(String(row?.['helix-retry-after']))).toBeGreaterThan(Date.now())
      // the other host does not select it while it backs off, and waits for it instead of draining
      expect((await b.fleet.tracker.read()).byId.get('hx-1')?.status).toBe('in_progress')
      // (b's view may be a moment old: a's claim, or the backoff after it, each in words)
      expect(b.fleet.waiting()).toEqual([{until: expect.any(String), what: expect.stringMatching(/^hx-1 (claimed by a|backing off after a failure \(until \d\d:\d\d:\d\d\))$/)}])
      if (n === 1) {
        // once b reads the tip again, the backoff in words, with its end
        const backingOff = /^hx-1 backing off after a failure \(until \d\d:\d\d:\d\d\)$/
        await waitFor(async () => (await b.fleet.tracker.read(), backingOff.test(b.fleet.waiting()[0]?.what ?? '')), {intervalMs: GIT_POLL_MS, what: 'b to see hx-1 backing off'})
        expect(b.fleet.waiting()).toHaveLength(1)
      }
    }
    const [row] = tipBeads(f.bare)
    expect(row?.labels).toEqual(['blocked'])
    // the same words as one host's block (SPEC 22.2): 5.6's reason, then the last attempt's
    expect(String(row?.notes)).toMatch(/^BLOCKED \[.*\]: intractable after 4 attempts with exponential backoff; last: rc=1: tests fail \(attempt 4\)$/)
    expect(remoteRefs(f.bare)).toEqual([])
    await a.fleet.close()
    await b.fleet.close()
  }, 180_000)
})
