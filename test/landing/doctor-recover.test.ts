// `helix doctor` and `helix recover --worktrees` in the test's own process (src/): what they print,
// remove and keep (doctor's exit code as a shell sees it: operator/next-doctor.e2e).
import {existsSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {agentCommit, branches, g, gitTestEnv, makeRepo, worktrees} from './helpers.js'
import {helixInProcess} from '../support/in-process.js'

/** A repository (a rig temp dir, removed after the test) and the landing the run would use in it. */
function repoWithLanding() {
  const root = makeRepo()
  return {root, landing: createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date()})}
}

function helix(cwd: string, args: string[]) {
  return helixInProcess(cwd, args, {GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C', HELIX_AGENT: process.execPath})
}

describe('doctor and recover --worktrees', () => {
  it('doctor fails on a stale worktree, recover --worktrees --dry-run lists it, recover removes it and keeps its work', async () => {
    const {root, landing} = repoWithLanding()
    const ws = await landing.prepare('hx-1', 1, 1)
    const sha = agentCommit(ws.dir, 'c.ts', 'c\n')
    const keep = await landing.prepare('hx-2', 1, 2)
    agentCommit(keep.dir, 'd.ts', 'd\n')
    expect(await landing.preserve(keep, 'FAILED')).toBe('refs/helix/preserved/hx-2/1')

    const doc = await helix(root, ['doctor'])
    expect(doc.stdout).toMatch(/^FAIL +worktrees: 1 stale worktree\(s\) no run owns: \.helix\/worktrees\/hx-1-1$/m)
    expect(doc.stdout).toContain("fix: run 'helix recover --worktrees'")
    expect(doc.stdout).toMatch(/^WARN +preserved work: 1 ref\(s\) under refs\/helix\/preserved\/ of beads not closed, no run owns: refs\/helix\/preserved\/hx-2\/1$/m)
    expect(doc.code).toBe(1)

    const dry = await helix(root, ['recover', '--worktrees', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toContain('helix: would remove worktree .helix/worktrees/hx-1-1; branch helix/hx-1-1 would be deleted (work kept at refs/helix/preserved/hx-1/…)')
    expect(existsSync(ws.dir)).toBe(true)

    const r = await helix(root, ['recover', '--worktrees'])
    expect(r.code).toBe(0)
    // SPEC 18.3a: its work is kept on a preserved ref, not on a branch no run owns
    expect(r.stdout).toContain('helix: removed worktree .helix/worktrees/hx-1-1; branch helix/hx-1-1 deleted (work kept at refs/helix/preserved/hx-1/1)')
    expect(worktrees(root)).toEqual([root])
    expect(branches(root)).toEqual([])
    expect(g(root, 'rev-parse', 'refs/helix/preserved/hx-1/1')).toBe(sha)
    expect(g(root, 'for-each-ref', '--format=%(refname)', 'refs/helix/')).toBe('refs/helix/preserved/hx-1/1\nrefs/helix/preserved/hx-2/1')

    const after = await helix(root, ['doctor'])
    expect(after.stdout).toMatch(/^ok +worktrees: no stale worktrees$/m)
  })

  it("a worktree whose .git is gone (a removal cut short) never makes recover touch the operator's checkout", async () => {
    const {root, landing} = repoWithLanding()
    const ws = await landing.prepare('hx-1', 1, 1)
    const sha = agentCommit(ws.dir, 'c.ts', 'c\n')
    writeFileSync(path.join(ws.dir, 'left.ts'), 'uncommitted\n')
    // a kill -9 during `git worktree remove`: the directory is half deleted, its .git file first
    rmSync(path.join(ws.dir, '.git'))
    // the operator is editing in the project root meanwhile
    writeFileSync(path.join(root, 'a.ts'), 'operator edit\n')
    const main = g(root, 'rev-parse', 'main')

    const r = await helix(root, ['recover'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    // git discovery from the broken worktree would have found the root: its add -A and commit
    // then commit the operator's edit onto main as "uncommitted work of hx-1"
    expect(g(root, 'rev-parse', 'main')).toBe(main)
    expect(g(root, 'status', '--porcelain', '--untracked-files=no')).toBe('M a.ts')
    expect(g(root, 'rev-parse', 'refs/helix/preserved/hx-1/1')).toBe(sha)
    expect(worktrees(root)).toEqual([root])
    expect(branches(root)).toEqual([])
  })

  it('plain recover reconciles too (SPEC 18.2): a dead run\'s attempt of a closed bead goes to a preserved ref and the bead is reopened NOT LANDED', async () => {
    const {root, landing} = repoWithLanding()
    const ws = await landing.prepare('hx-1', 1, 1)
    const sha = agentCommit(ws.dir, 'c.ts', 'c\n')
    // the agent closed its bead, then the run died before landing
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), '{"id":"hx-1","title":"one","status":"closed"}\n')

    const dry = await helix(root, ['recover', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toContain('helix: would remove worktree .helix/worktrees/hx-1-1; branch helix/hx-1-1 would be deleted (work kept at refs/helix/preserved/hx-1/…); hx-1 would be reopened')
    expect(existsSync(ws.dir)).toBe(true)

    const r = await helix(root, ['recover'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('helix: no orphaned claims to recover')
    expect(r.stdout).toContain('helix: removed worktree .helix/worktrees/hx-1-1; branch helix/hx-1-1 deleted (work kept at refs/helix/preserved/hx-1/1); reopened hx-1')
    expect(worktrees(root)).toEqual([root])
    expect(branches(root)).toEqual([])
    expect(g(root, 'rev-parse', 'refs/helix/preserved/hx-1/1')).toBe(sha)
    const bead = JSON.parse(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8').trim()) as {status: string; notes?: string}
    expect(bead.status).toBe('open')
    expect(bead.notes).toMatch(/NOT LANDED \[[^\]]+\]: left by a run that ended, removed by helix recover; work kept at refs\/helix\/preserved\/hx-1\/1/)
    // nothing left: a second recover says nothing about worktrees
    const again = await helix(root, ['recover'])
    expect(again.stdout.trim()).toBe('helix: no orphaned claims to recover')
  })
})
