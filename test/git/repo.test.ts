// The typed git layer (src/git/repo.ts): pushes and fetches classified from git's own
// answers (SPEC 20.1), first from real git against real bare repositories, then from
// the lines git prints in cases a test cannot provoke at will (another host's lock).
import path from 'node:path'
import {writeFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {gitEnv} from '../../src/git/run.js'
import {classifyFetch, classifyPush, openRepo} from '../../src/git/repo.js'
import {g, gitTestEnv} from '../landing/helpers.js'
import {makeTempDir} from '../support/tmp.js'

function setup(): {bare: string; a: string; b: string} {
  const dir = makeTempDir('helix-repo-')
  const bare = path.join(dir, 'r.git')
  g(dir, 'init', '-q', '--bare', '-b', 'main', bare)
  const clone = (name: string) => {
    const c = path.join(dir, name)
    g(dir, 'clone', '-q', bare, c)
    g(c, 'config', 'user.email', `${name}@example.com`)
    g(c, 'config', 'user.name', name)
    return c
  }
  const a = clone('a')
  g(a, 'commit', '-q', '--allow-empty', '-m', 'one')
  g(a, 'push', '-q', 'origin', 'HEAD:main')
  const b = clone('b')
  return {bare, a, b}
}

const repo = (dir: string) => openRepo(dir, gitEnv(gitTestEnv))

describe('typed pushes against a real bare remote', () => {
  it('a non-fast-forward and a stale lease are races; an accepted push is ok', async () => {
    const {a, b} = setup()
    g(a, 'commit', '-q', '--allow-empty', '-m', 'two')
    expect(await repo(a).push(['origin', 'HEAD:main'])).toMatchObject({ok: true})
    g(b, 'commit', '-q', '--allow-empty', '-m', 'other')
    const nff = await repo(b).push(['origin', 'HEAD:main'])
    expect(nff).toMatchObject({ok: false, kind: 'race'})
    const head = g(b, 'rev-parse', 'HEAD')
    expect(await repo(a).push(['--force-with-lease=refs/helix/claims/x:', 'origin', 'HEAD:refs/helix/claims/x'])).toMatchObject({ok: true})
    const stale = await repo(b).push(['--force-with-lease=refs/helix/claims/x:', 'origin', `${head}:refs/helix/claims/x`])
    expect(stale).toMatchObject({ok: false, kind: 'race'})
    expect(stale.ok ? '' : stale.message).toMatch(/stale info/)
  })

  it('a ref in the way (refs/helix/claims/b3/x) is a conflict naming that ref, never a race', async () => {
    const {a, b} = setup()
    g(a, 'push', '-q', 'origin', 'HEAD:refs/helix/claims/b3/x')
    const p = await repo(b).push(['--force-with-lease=refs/helix/claims/b3:', 'origin', 'HEAD:refs/helix/claims/b3'])
    expect(p).toMatchObject({ok: false, kind: 'conflict', blockingRef: 'refs/helix/claims/b3/x'})
  })

  it('a remote that is not there is unreachable, with git own words', async () => {
    const {a} = setup()
    g(a, 'remote', 'set-url', 'origin', path.join(path.dirname(a), 'nowhere.git'))
    const p = await repo(a).push(['origin', 'HEAD:main'])
    expect(p).toMatchObject({ok: false, kind: 'unreachable'})
    expect(p.ok ? '' : p.message).toMatch(/does not appear to be a git repository|Could not read from remote/)
    const f = await repo(a).fetch(['origin', 'main'])
    expect(f).toMatchObject({ok: false, kind: 'unreachable'})
  })

  it('a pre-receive hook refusal is rejected (the push own fault, not a race)', async () => {
    const {bare, a} = setup()
    const hook = path.join(bare, 'hooks', 'pre-receive')
    const {writeFileSync, chmodSync} = await import('node:fs')
    writeFileSync(hook, '#!/bin/sh\necho "protected branch" >&2\nexit 1\n')
    chmodSync(hook, 0o755)
    g(a, 'commit', '-q', '--allow-empty', '-m', 'two')
    const p = await repo(a).push(['origin', 'HEAD:main'])
    expect(p).toMatchObject({ok: false, kind: 'rejected'})
    // the remote's own words say why, not git's "failed to push some refs"
    expect(p.ok ? '' : p.message).toBe('[remote rejected] (pre-receive hook declined): protected branch')
  })

  it('four fetches of one clone at once never fail on git own ref lock (the clone queue)', async () => {
    const {a, b} = setup()
    const r = repo(b)
    for (let round = 0; round < 5; round++) {
      g(a, 'commit', '-q', '--allow-empty', '-m', `r${round}`)
      g(a, 'push', '-q', 'origin', 'HEAD:main')
      const all = await Promise.all([1, 2, 3, 4].map(() => r.fetch(['origin', '+refs/heads/main:refs/remotes/origin/main'])))
      expect(all).toEqual([{ok: true}, {ok: true}, {ok: true}, {ok: true}])
    }
    expect(await r.revParse('refs/remotes/origin/main')).toBe(g(a, 'rev-parse', 'HEAD'))
  })
})

describe('classification of the lines git prints', () => {
  const push = (stdout: string, stderr: string, code = 1) => classifyPush({code, stdout, stderr})

  it('a local ref lock during a fetch is a race', () => {
    const r = classifyFetch({code: 1, stdout: '', stderr: "error: cannot lock ref 'refs/remotes/origin/main': is at 1111111111111111111111111111111111111111 but expected 2222222222222222222222222222222222222222\n ! 2222222..3333333  main       -> origin/main  (unable to update local ref)\n"})
    expect(r).toMatchObject({ok: false, kind: 'race'})
    expect(r.ok ? '' : r.message).toMatch(/^error: cannot lock ref 'refs\/remotes\/origin\/main'/)
  })

  it('a worktree of this clone half made while a fetch walks every HEAD is a race, not an unreachable remote (real git)', async () => {
    const {a, b} = setup()
    g(a, 'worktree', 'add', '-q', '-b', 'half', path.join(path.dirname(a), 'wt-half'))
    // what another slot's `worktree add` looks like before its HEAD's commit is there
    writeFileSync(path.join(a, '.git', 'worktrees', 'wt-half', 'HEAD'), '0123456789012345678901234567890123456789\n')
    g(b, 'commit', '-q', '--allow-empty', '-m', 'moved on')
    g(b, 'push', '-q', 'origin', 'main')
    const r = await openRepo(a, gitEnv(gitTestEnv)).fetch(['origin', '+refs/heads/main:refs/remotes/origin/main'])
    expect(r).toMatchObject({ok: false, kind: 'race'})
    expect(r.ok ? '' : r.message).toMatch(/bad object worktrees\/wt-half\/HEAD/)
  })

  it('a remote-side lock (another host pushing the same ref) is a race', () => {
    const r = push(
      'To /r.git\n!\tabc:refs/heads/main\t[remote rejected] (failed to update ref)\nDone\n',
      "remote: error: cannot lock ref 'refs/heads/main': Unable to create '/r.git/refs/heads/main.lock': File exists.\nerror: failed to push some refs to '/r.git'\n",
    )
    expect(r).toMatchObject({ok: false, kind: 'race'})
  })

  it('an atomic push whose base moved: race; whose claim moved: race with the claim line stale', () => {
    const moved = push('To /r.git\n!\tabc:refs/heads/main\t[rejected] (fetch first)\n!\t:refs/helix/claims/b1\t[rejected] (atomic push failed)\nDone\n', 'error: failed to push some refs to')
    expect(moved).toMatchObject({ok: false, kind: 'race', message: '[rejected] (fetch first)'})
    const stale = push('To /r.git\n!\tabc:refs/heads/main\t[rejected] (atomic push failed)\n!\t:refs/helix/claims/b1\t[rejected] (stale info)\nDone\n', 'error: failed to push some refs to')
    expect(stale).toMatchObject({ok: false, kind: 'race'})
    expect(stale.refs.find((x) => x.to === 'refs/helix/claims/b1')?.summary).toBe('[rejected] (stale info)')
  })

  it('every ref accepted but the local tracking ref not updated: the push went out (ok)', () => {
    const r = push(' \tabc:refs/heads/main\t111..222\nDone\n', "error: update_ref failed for ref 'refs/remotes/origin/main': cannot lock ref 'refs/remotes/origin/main'")
    expect(r.ok).toBe(true)
  })

  it('transport failures are unreachable; ssh and http words too', () => {
    for (const stderr of [
      "fatal: '/x.git' does not appear to be a git repository\nfatal: Could not read from remote repository.",
      'ssh: connect to host example.com port 22: Connection refused\nfatal: Could not read from remote repository.',
      "fatal: unable to access 'https://example.com/r.git/': Could not resolve host: example.com",
    ])
      expect(push('', stderr, 128)).toMatchObject({ok: false, kind: 'unreachable'})
  })
})
