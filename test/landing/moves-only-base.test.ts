// SPEC 18.3a with real git: landing moves only the base, by merge --ff-only where
// it is checked out; hooks are honoured; no commit becomes unreachable; a worktree
// that cannot be made and a base named `helix` fail cleanly; preserved refs of
// beads that landed since are pruned (issue 20 item 8).
import {chmodSync, existsSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {recoverWorktrees} from '../../src/recovery/worktrees.js'
import {prunePreserved} from '../../src/recovery/reconcile-checks.js'
import {projectPaths} from '../../src/util/root.js'
import {agentCommit, branches, g, gitTestEnv, makeRepo, worktrees, write} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

function setup() {
  const root = makeRepo()
  const logs: string[] = []
  const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date('2026-11-23T12:00:00Z'), log: (l) => logs.push(l), lockWaitMs: 2000})
  return {root, landing, logs}
}

function hook(root: string, name: string, body: string): void {
  const f = path.join(root, '.git', 'hooks', name)
  writeFileSync(f, `#!/bin/sh\n${body}\n`)
  chmodSync(f, 0o755)
}

describe('landing moves only the base', () => {
  it('the operator moved main into another worktree and the root onto dev: main moves there by merge, dev and both checkouts stay clean', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-a', 1, 1)
    agentCommit(ws.dir, 'new.ts', 'new\n')
    g(root, 'switch', '-q', '-c', 'dev')
    const other = path.join(makeTempDir('helix-wt-'), 'wt')
    g(root, 'worktree', 'add', '-q', other, 'main')
    const dev = g(root, 'rev-parse', 'dev')
    const r = await landing.land(ws)
    expect(r.landed).toBe(true)
    expect(g(root, 'rev-parse', 'main')).toBe(r.landed ? r.sha : '')
    expect(g(root, 'rev-parse', 'dev')).toBe(dev)
    // the worktree that has main checked out has the landed file, not a staged deletion
    expect(g(other, 'status', '--porcelain')).toBe('')
    expect(existsSync(path.join(other, 'new.ts'))).toBe(true)
    expect(g(root, 'status', '--porcelain')).toBe('')
    g(root, 'worktree', 'remove', '--force', other)
  })

  it('a pre-commit hook that refuses the leftovers: not landed, main unchanged, the work kept on the preserved ref by commit-tree', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-a', 1, 1)
    write(ws.dir, 'left.ts', 'left\n')
    hook(root, 'pre-commit', 'echo "policy: no" >&2; exit 1')
    const before = g(root, 'rev-parse', 'main')
    const r = await landing.land(ws)
    expect(r).toMatchObject({landed: false, preservedRef: 'refs/helix/preserved/hx-a/1'})
    expect(r.landed ? '' : r.reason).toMatch(/a hook refused the commit .*policy: no/)
    expect(g(root, 'rev-parse', 'main')).toBe(before)
    expect(g(root, 'show', 'refs/helix/preserved/hx-a/1:left.ts')).toBe('left')
    expect(branches(root)).toEqual([])
    expect(worktrees(root)).toEqual([root])
  })

  it('a failing post-checkout hook fails that attempt only and leaves no branch, worktree or directory', async () => {
    const {root, landing} = setup()
    hook(root, 'post-checkout', 'exit 1')
    await expect(landing.prepare('hx-a', 1, 1)).rejects.toThrow(/git worktree add for hx-a attempt 1 failed/)
    expect(branches(root)).toEqual([])
    expect(worktrees(root)).toEqual([root])
    expect(existsSync(path.join(root, '.helix', 'worktrees', 'hx-a-1'))).toBe(false)
  })

  it("a base branch named 'helix' is refused at start", async () => {
    const {root, landing} = setup()
    g(root, 'branch', '-m', 'main', 'helix')
    await expect(landing.base()).rejects.toThrow(/the base branch 'helix' collides with helix's attempt branches/)
  })
})

describe('no commit becomes unreachable', () => {
  it('recover --worktrees keeps the commits of a detached HEAD on a preserved ref before removing the worktree', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-a', 1, 1)
    g(ws.dir, 'switch', '-q', '--detach')
    const sha = agentCommit(ws.dir, 'd.ts', 'd\n')
    const lines: string[] = []
    await recoverWorktrees(projectPaths(root, {}), {env: gitTestEnv, dryRun: false, say: (l) => lines.push(l), now: Date.now() + 3_600_000})
    expect(worktrees(root)).toEqual([root])
    expect(branches(root)).toEqual([])
    expect(g(root, 'for-each-ref', '--contains', sha, '--format=%(refname)')).toBe('refs/helix/preserved/hx-a/1')
    expect(lines[0]).toMatch(/removed worktree \.helix\/worktrees\/hx-a-1; branch helix\/hx-a-1 deleted \(work kept at refs\/helix\/preserved\/hx-a\/1\)/)
  })
})

describe('pruning preserved refs (issue 20 item 8)', () => {
  it('prunes refs of beads closed longer than the keep period, never those of an open bead', async () => {
    const root = makeRepo()
    const tip = g(root, 'rev-parse', 'HEAD')
    const old = new Date(Date.now() - 8 * 86_400_000).toISOString()
    writeFileSync(
      path.join(root, '.ddx', 'beads.jsonl'),
      [
        {id: 'hx-old', status: 'closed', closed_at: old, updated_at: old},
        {id: 'hx-new', status: 'closed', closed_at: new Date().toISOString()},
        {id: 'hx-open', status: 'open'},
      ]
        .map((b) => JSON.stringify({title: b.id, ...b}) + '\n')
        .join(''),
    )
    for (const id of ['hx-old', 'hx-new', 'hx-open']) g(root, 'update-ref', `refs/helix/preserved/${id}/1`, tip)
    const paths = projectPaths(root, {})
    const said: string[] = []
    expect(await prunePreserved(paths, {env: gitTestEnv, keepDays: 7, all: false, dryRun: true, say: (l) => said.push(l)})).toEqual(['refs/helix/preserved/hx-old/1'])
    expect(g(root, 'for-each-ref', '--format=%(refname)', 'refs/helix/').split('\n')).toHaveLength(3)
    expect(await prunePreserved(paths, {env: gitTestEnv, keepDays: 7, all: false, dryRun: false, say: (l) => said.push(l)})).toEqual(['refs/helix/preserved/hx-old/1'])
    // `helix recover --preserved`: every landed bead's refs now, never the open one's
    expect(await prunePreserved(paths, {env: gitTestEnv, keepDays: 0, all: true, dryRun: false, say: (l) => said.push(l)})).toEqual(['refs/helix/preserved/hx-new/1'])
    expect(g(root, 'for-each-ref', '--format=%(refname)', 'refs/helix/')).toBe('refs/helix/preserved/hx-open/1')
  })
})
