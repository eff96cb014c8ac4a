// The typed git layer's local reads (src/git/repo.ts, session 27), on real repositories:
// commitOf, headRef, rebaseState, forEachRef over several patterns, names, and the
// reflog message of updateRef.
import {spawnSync} from 'node:child_process'
import {rmSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {gitEnv} from '../../src/git/run.js'
import {openRepo} from '../../src/git/repo.js'
import {g, gitTestEnv, makeRepo} from '../landing/helpers.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function setup() {
  const root = makeRepo('helix-repo-local-')
  dirs.push(root)
  return {root, repo: openRepo(root, gitEnv(gitTestEnv))}
}

describe('local reads of the typed layer', () => {
  it('commitOf peels to a commit and answers null for what is not one', async () => {
    const {root, repo} = setup()
    const tip = g(root, 'rev-parse', 'HEAD')
    expect(await repo.commitOf('refs/heads/main')).toBe(tip)
    expect(await repo.commitOf('refs/heads/nope')).toBeNull()
    expect(await repo.commitOf(g(root, 'rev-parse', 'HEAD^{tree}'))).toBeNull()
  })

  it('headRef and rebaseState: on a branch, detached, and with a rebase stopped half done', async () => {
    const {root, repo} = setup()
    expect(await repo.headRef()).toBe('refs/heads/main')
    expect(await repo.rebaseState(root)).toEqual({rebasing: false, head: 'refs/heads/main'})
    const wt = path.join(root, '.wt')
    g(root, 'worktree', 'add', '-q', '-b', 'att', wt, 'main')
    g(wt, 'rm', '-q', 'a.ts')
    g(wt, 'commit', '-q', '-m', 'delete a')
    g(root, 'commit', '-q', '--allow-empty', '-m', 'empty')
    g(root, 'switch', '-q', '--detach')
    expect(await repo.headRef()).toBeNull()
    expect(await repo.rebaseState(root)).toEqual({rebasing: false, head: null})
    g(root, 'switch', '-q', 'main')
    // a change to a.ts on main that the attempt's deletion conflicts with
    spawnSync('sh', ['-c', 'echo changed >> a.ts && git commit -q -am change'], {cwd: root, env: gitTestEnv})
    const rb = spawnSync('git', ['rebase', '-q', 'main'], {cwd: wt, env: gitTestEnv})
    expect(rb.status).not.toBe(0)
    expect(await repo.rebaseState(wt)).toEqual({rebasing: true, head: null})
    g(wt, 'rebase', '--abort')
    expect(await repo.rebaseState(wt)).toEqual({rebasing: false, head: 'refs/heads/att'})
    g(root, 'worktree', 'remove', '--force', wt)
  })

  it('forEachRef lists several patterns in one call; names splits a -z list', async () => {
    const {root, repo} = setup()
    const tip = g(root, 'rev-parse', 'HEAD')
    g(root, 'update-ref', 'refs/helix/preserved/hx-1/2', tip)
    g(root, 'update-ref', 'refs/heads/helix/hx-1-3', tip)
    g(root, 'update-ref', 'refs/heads/helix/hx-10-1', tip)
    const listed = await repo.forEachRef(['refs/heads/helix/hx-1-*', 'refs/helix/preserved/hx-1/', 'refs/heads/main'])
    expect(listed.map((r) => r.ref).sort()).toEqual(['refs/heads/helix/hx-1-3', 'refs/heads/main', 'refs/helix/preserved/hx-1/2'])
    expect(listed.every((r) => r.sha === tip)).toBe(true)
    expect(await repo.forEachRef('refs/helix/preserved/')).toEqual([{ref: 'refs/helix/preserved/hx-1/2', sha: tip}])
    expect((await repo.names(['ls-files', '-z'])).sort()).toEqual(['.ddx/beads.jsonl', 'a.ts', 'b.ts'])
  })

  it("forEachRef with head says which listed ref is the HEAD of the Repo's own worktree, not another's", async () => {
    const {root, repo} = setup()
    const tip = g(root, 'rev-parse', 'HEAD')
    const wt = path.join(root, '.wt')
    g(root, 'worktree', 'add', '-q', '-b', 'att', wt, 'main')
    const refs = ['refs/heads/main', 'refs/heads/att']
    expect(await repo.forEachRef(refs, {head: true})).toEqual([
      {ref: 'refs/heads/att', sha: tip, head: false},
      {ref: 'refs/heads/main', sha: tip, head: true},
    ])
    // the root on another branch: main is nobody's HEAD here, though the worktree has att checked out
    g(root, 'switch', '-q', '-c', 'other')
    expect((await repo.forEachRef(refs, {head: true})).map((r) => r.head)).toEqual([false, false])
    g(root, 'switch', '-q', '--detach')
    expect((await repo.forEachRef(refs, {head: true})).map((r) => r.head)).toEqual([false, false])
    g(root, 'worktree', 'remove', '--force', wt)
  })

  it('updateRef is a compare-and-set that writes its message to the reflog', async () => {
    const {root, repo} = setup()
    const tip = g(root, 'rev-parse', 'HEAD')
    g(root, 'commit', '-q', '--allow-empty', '-m', 'next')
    const next = g(root, 'rev-parse', 'HEAD')
    expect(await repo.updateRef('refs/heads/side', tip, '', 'helix: made for the test')).toBe(true)
    expect(await repo.updateRef('refs/heads/side', next, '', 'must not exist')).toBe(false)
    expect(await repo.updateRef('refs/heads/side', next, tip, 'helix: moved for the test')).toBe(true)
    expect(g(root, 'reflog', '--format=%gs', 'refs/heads/side').split('\n')).toEqual(['helix: moved for the test', 'helix: made for the test'])
  })
})
