// `git worktree list` dies ("failed to read .git/worktrees/<x>/commondir") while another
// git process writes or removes that worktree's entry: another slot's `worktree add`
// or cleanup. Landing once read that empty answer as "the base is checked out nowhere"
// and moved the checked-out base with update-ref, leaving the operator's index and
// files behind (`git status` then showed the landed files as staged deletions).
import {rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {listWorktrees} from '../../src/git/checked-out.js'
import {agentCommit, g, gitTestEnv, makeRepo} from './helpers.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

/** another attempt's worktree entry caught half-written: its commondir file exists and is empty */
function halfWritten(root: string): string {
  const other = path.join(root, '.helix', 'worktrees', 'hx-9-1')
  g(root, 'worktree', 'add', '-q', '-b', 'helix/hx-9-1', other)
  writeFileSync(path.join(root, '.git', 'worktrees', 'hx-9-1', 'commondir'), '')
  expect(() => g(root, 'worktree', 'list', '--porcelain')).toThrow(/failed to read .*commondir/)
  return other
}

describe('landing while another worktree entry is half-written', () => {
  it('a base checked out in the root moves by merge --ff-only there: the root stays clean', async () => {
    const root = makeRepo()
    dirs.push(root)
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date(), lockWaitMs: 2000})
    const ws = await landing.prepare('hx-1', 1, 1)
    const sha = agentCommit(ws.dir, 'c.ts', 'c\n')
    halfWritten(root)
    const r = await landing.land(ws)
    expect(r.landed).toBe(true)
    expect(g(root, 'rev-parse', 'main')).toBe(sha)
    // the landed file is in the root's index and working tree, not a staged deletion
    expect(g(root, 'status', '--porcelain', '--untracked-files=no')).toBe('')
    expect(g(root, 'show', 'HEAD:c.ts')).toBe('c')
  })

  it('a list that keeps failing is an error, never an empty list: a base checked out elsewhere is not moved', async () => {
    const root = makeRepo()
    dirs.push(root)
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date(), lockWaitMs: 2000})
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'c.ts', 'c\n')
    // the operator moves main into a worktree of their own and the root to another branch
    const mine = `${root}-mine`
    dirs.push(mine)
    g(root, 'switch', '-q', '-c', 'side')
    g(root, 'worktree', 'add', '-q', mine, 'main')
    const before = g(root, 'rev-parse', 'main')
    halfWritten(root)
    await expect(listWorktrees(root, gitTestEnv)).rejects.toThrow(/^helix: git worktree list failed: fatal: failed to read .*commondir/)

    const r = await landing.land(ws)
    expect(r.landed).toBe(false)
    expect(r.landed ? '' : r.reason).toMatch(/git worktree list failed/)
    expect(g(root, 'rev-parse', 'main')).toBe(before)
    expect(g(mine, 'status', '--porcelain', '--untracked-files=no')).toBe('')
    expect(r.landed ? null : r.preservedRef).toBe('refs/helix/preserved/hx-1/1')
  })
})
