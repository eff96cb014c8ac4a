// `helix doctor --remote <name>` (SPEC 19.1): the remote answers, and the clocks agree
// within 30 s: an http remote's Date header (served by `git http-backend` on 127.0.0.1)
// and other hosts' claim commits are the witnesses. In-process (test/support/in-process.ts):
// what doctor prints and its exit code; its git calls are async, so the http server under
// test, in this same process, answers while doctor waits.
import {spawnSync} from 'node:child_process'
import {helixInProcess} from '../support/in-process.js'
import {GIT_ISOLATION} from '../support/git.js'
import {rmSync} from 'node:fs'
import path from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {bead, g, gitTestEnv, makeFleet, remoteRefs} from './helpers.js'
import {serveBare} from './http-remote.js'
import {traceDate} from '../../src/operator/doctor-remote.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

/** `helix doctor <args>` in a host clone, in-process; `status` is the exit code */
async function doctor(cwd: string, ...args: string[]): Promise<{status: number; stdout: string; stderr: string}> {
  const r = await helixInProcess(cwd, ['doctor', ...args], {...GIT_ISOLATION, HELIX_AGENT: process.execPath, HELIX_HOST: 'host-a'})
  return {status: r.code, stdout: r.stdout, stderr: r.stderr}
}

/** a claim ref on the bare remote by `host`, committed `aheadMs` in this clock's future */
function claimBy(bare: string, host: string, bead: string, aheadMs: number): void {
  const at = new Date(Date.now() + aheadMs)
  const msg = JSON.stringify({host, run: `${host}:1:x`, pid: 1, attempt: 1, claimed_at: at.toISOString(), expires_at: new Date(at.getTime() + 300_000).toISOString()})
  const empty = g(bare, 'hash-object', '-t', 'tree', '-w', '/dev/null')
  const r = spawnSync('git', ['-c', 'user.name=z', '-c', 'user.email=z@example.com', 'commit-tree', '-m', msg, empty], {cwd: bare, env: {...gitTestEnv, GIT_COMMITTER_DATE: `${Math.floor(at.getTime() / 1000)} +0000`}, encoding: 'utf8'})
  g(bare, 'update-ref', `refs/helix/claims/${bead}`, r.stdout.trim())
}

// the commands' module graph is transformed before any test's clock starts (minutes at load 30)
beforeAll(async () => {
  await import('../../src/commands/doctor.js')
}, 300_000)

describe('doctor --remote (SPEC 19.1)', () => {
  it("warns when another host's claims are committed in the future; ok when they agree; bad name and dead remote", async () => {
    const f = makeFleet([bead('hx-1'), bead('hx-2')])
    dirs.push(f.dir)
    const host = f.clone('host-a')

    const bad = await doctor(host, '--remote', 'upstream')
    expect(bad.status).toBe(1)
    expect(bad.stderr.trim()).toBe("helix: --remote upstream: no such git remote here (see 'git remote -v')")

    const none = await doctor(host, '--remote', 'origin')
    expect(none.stdout).toMatch(/^ok +remote: origin answers$/m)
    expect(none.stdout).toMatch(/^ok +clock: nothing to compare with yet/m)

    claimBy(f.bare, 'host-b', 'hx-1', 0)
    const agree = await doctor(host, '--remote', 'origin')
    expect(agree.stdout).toMatch(/^ok +clock: within 30s of 1 other host\(s\)' claims$/m)

    claimBy(f.bare, 'host-z', 'hx-2', 5 * 60_000)
    const skewed = await doctor(host, '--remote', 'origin')
    expect(skewed.stdout).toMatch(/^WARN +clock: host-z's clock is at least 5m ahead of this host's \(its claim on hx-2 is committed in the future\)$/m)
    expect(skewed.stdout).toContain('fix: synchronise the clocks')
    // read-only: the claims are as they were
    expect(remoteRefs(f.bare)).toEqual(['refs/helix/claims/hx-1', 'refs/helix/claims/hx-2'])

    g(host, 'remote', 'set-url', 'origin', path.join(f.dir, 'gone.git'))
    const dead = await doctor(host, '--remote', 'origin')
    expect(dead.status).toBe(1)
    expect(dead.stdout).toMatch(/^FAIL +remote: origin does not answer: /m)
  }, 120_000)

  it('names a stray ref under a claim name (refs/helix/claims/b3/x) as what it is, with the push that removes it', async () => {
    const f = makeFleet([bead('b3')])
    dirs.push(f.dir)
    const host = f.clone('host-a')
    g(host, 'push', '-q', 'origin', 'HEAD:refs/helix/claims/b3/x')
    const d = await doctor(host, '--remote', 'origin')
    expect(d.stdout).toMatch(/^WARN +stray claim ref: refs\/helix\/claims\/b3\/x on origin is not a claim; it blocks the claim ref of b3, so no host can claim b3$/m)
    expect(d.stdout).toContain('fix: git push origin :refs/helix/claims/b3/x')
    expect(d.stdout).not.toMatch(/another host|claimed by/)
    expect(remoteRefs(f.bare)).toEqual(['refs/helix/claims/b3/x'])
  })

  it("reads an http remote's clock from its Date header: 2 minutes off warns, in step is ok", async () => {
    const f = makeFleet([bead('hx-1')])
    dirs.push(f.dir)
    g(f.bare, 'config', 'http.receivepack', 'true')
    const host = f.clone('host-a')
    const slow = await serveBare(f.bare, {dateOffsetMs: -120_000})
    try {
      g(host, 'remote', 'set-url', 'origin', slow.url)
      const r = await doctor(host, '--remote', 'origin')
      expect(r.stdout).toMatch(/^ok +remote: origin answers$/m)
      expect(r.stdout).toMatch(/^WARN +clock: this host's clock is 2m ahead of the remote's \(its HTTP Date\)$/m)
    } finally {
      await slow.close()
    }
    const fine = await serveBare(f.bare)
    try {
      g(host, 'remote', 'set-url', 'origin', fine.url)
      const r = await doctor(host, '--remote', 'origin')
      expect(r.stdout).toMatch(/^ok +clock: within 30s of the remote's HTTP Date$/m)
    } finally {
      await fine.close()
    }
  }, 120_000)

  it('traceDate takes the last Date header of a curl trace', () => {
    const trace = ['12:00:00.000000 http.c:700 <= Recv header: HTTP/1.1 200 OK', '12:00:00.000000 http.c:700 <= Recv header: date: Tue, 24 Nov 2026 18:00:00 GMT', '12:00:01.000000 http.c:700 <= Recv header: Date: Tue, 24 Nov 2026 18:00:05 GMT', '=> Send header: Date: nonsense'].join('\n')
    expect(traceDate(trace)?.toISOString()).toBe('2026-11-24T18:00:05.000Z')
    expect(traceDate('no headers here')).toBeNull()
  })
})
