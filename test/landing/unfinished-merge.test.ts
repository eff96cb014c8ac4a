// A hostile or confused agent (session 35) leaves a merge stopped on a conflict in
// its worktree and closes its bead. helix's commit of the leftovers must not turn the
// conflict markers into a landed merge commit: not landed, main unchanged, the state
// archived on the preserved ref (SPEC 18.1, 18.3a).
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {agentCommit, branches, g, gitTestEnv, makeRepo, worktrees} from './helpers.js'

describe('an unfinished merge in the attempt\'s worktree', () => {
  it('is not landed: main unchanged, the reason names the conflicted file, the state kept on the preserved ref', async () => {
    const root = makeRepo()
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date('2026-11-28T03:00:00Z'), log: () => {}, lockWaitMs: 2000})
    const ws = await landing.prepare('hx-a', 1, 1)
    agentCommit(ws.dir, 'f.txt', 'ours\n')
    g(ws.dir, 'switch', '-q', '-c', 'side', 'HEAD~1')
    agentCommit(ws.dir, 'f.txt', 'theirs\n')
    g(ws.dir, 'switch', '-q', ws.branch)
    // stops on the conflict; git exits 1 and leaves MERGE_HEAD and an unmerged f.txt
    expect(() => g(ws.dir, 'merge', '-q', 'side')).toThrow()
    const before = g(root, 'rev-parse', 'main')
    const r = await landing.land(ws)
    expect(r).toMatchObject({landed: false, preservedRef: 'refs/helix/preserved/hx-a/1'})
    expect(r.landed ? '' : r.reason).toBe("the agent's uncommitted changes hold unresolved conflicts (f.txt): a merge, cherry-pick or revert was left unfinished")
    expect(g(root, 'rev-parse', 'main')).toBe(before)
    expect(g(root, 'show', 'refs/helix/preserved/hx-a/1:f.txt')).toMatch(/^<<<<<<< /)
    expect(branches(root, 'helix/*')).toEqual([])
    expect(worktrees(root)).toEqual([root])
    g(root, 'branch', '-D', 'side')
  })
})
