// Issue 18: with workers, the fixed git cost of an attempt under the land lock is what
// keeps --workers 4 from its ideal. A landed attempt's worktree removal and branch
// deletion need no lock (the base already has its commits), so they run after the
// lock is released: the next slot's landing does not wait for them.
import {chmodSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {agentCommit, branches, g, gitTestEnv, makeRepo, worktrees} from './helpers.js'

describe('landing: cleanup after the land lock', () => {
  it('deletes the landed branch while no land lock is held, and still leaves no branch or worktree', async () => {
    const root = makeRepo()
    const common = g(root, 'rev-parse', '--path-format=absolute', '--git-common-dir')
    const lockDir = path.join(common, 'helix-land.lock')
    const seen = path.join(common, 'seen-by-hook.txt')
    // git runs reference-transaction for every ref update: record, for the deletion of
    // the attempt's branch, whether the land lock exists at that moment
    const hook = path.join(common, 'hooks', 'reference-transaction')
    writeFileSync(
      hook,
      `#!/bin/sh
[ "$1" = committed ] || exit 0
while read old new ref; do
  case "$ref" in refs/heads/helix/*) case "$new" in *[!0]*) ;; *) if [ -e "${lockDir}" ]; then echo "deleted $ref locked" >> "${seen}"; else echo "deleted $ref unlocked" >> "${seen}"; fi ;; esac ;; esac
done
`,
    )
    chmodSync(hook, 0o755)
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date('2026-11-23T12:00:00Z'), log: () => {}, lockWaitMs: 2000})
    const ws = await landing.prepare('hx-1', 1, 1)
    const sha = agentCommit(ws.dir, 'c.ts', 'new file\n')
    const r = await landing.land(ws)
    expect(r).toEqual({landed: true, sha, commits: [sha]})
    expect(g(root, 'rev-parse', 'refs/heads/main')).toBe(sha)
    expect(readFileSync(seen, 'utf8').trim().split('\n')).toEqual(['deleted refs/heads/helix/hx-1-1 unlocked'])
    expect(branches(root)).toEqual([])
    expect(worktrees(root)).toEqual([root])
    expect(existsSync(ws.dir)).toBe(false)
    expect(existsSync(lockDir)).toBe(false)
  })

  it('with cleanupInBackground, land returns once the base moved; settled() waits for the removal of worktree and branch', async () => {
    const root = makeRepo()
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date('2026-11-23T12:00:00Z'), log: () => {}, lockWaitMs: 2000, cleanupInBackground: true})
    const a = await landing.prepare('hx-1', 1, 1)
    const b = await landing.prepare('hx-2', 1, 2)
    agentCommit(a.dir, 'a.ts', 'a\n')
    agentCommit(b.dir, 'b.ts', 'b\n')
    // both land while the first one's removal may still be running: the second rebases onto the first
    const [ra, rb] = await Promise.all([landing.land(a), landing.land(b)])
    expect(ra.landed && rb.landed).toBe(true)
    await landing.settled?.()
    const tip = g(root, 'rev-parse', 'refs/heads/main')
    expect(g(root, 'ls-tree', '--name-only', tip).split('\n')).toEqual(expect.arrayContaining(['a.ts', 'b.ts']))
    expect(branches(root)).toEqual([])
    expect(worktrees(root)).toEqual([root])
    expect(existsSync(a.dir) || existsSync(b.dir)).toBe(false)
  })
})
