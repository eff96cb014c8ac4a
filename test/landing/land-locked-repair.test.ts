// SPEC 20.4 under the land lock: the base can move between the attempt's rebase
// (readyToLand) and the lock (another slot or process landed). A conflict met rebasing
// onto that newer tip is a repair as well, when the landing asks for repairs: the rebase
// stays stopped for the resolve action (and the lock is released), rather than aborted.
import {existsSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createLandBase} from '../../src/landing/land-base.js'
import {openRepo} from '../../src/git/repo.js'
import type {Workspace} from '../../src/loop/ports.js'
import {makeTempDir} from '../support/tmp.js'
import {g, gitTestEnv} from './helpers.js'
import {gitSeq} from '../support/git.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

const unused = async (): Promise<never> => {
  throw new Error('not used by landLocked')
}

/** a repository whose main moved (a conflicting edit of a.txt) after the attempt in `wt` was rebased onto `old` */
function movedBase(): {root: string; wt: string; old: string; ws: Workspace} {
  const root = makeTempDir('helix-land-locked-')
  dirs.push(root)
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 't@t'], ['config', 'user.name', 't'])
  writeFileSync(path.join(root, 'a.txt'), 'one\n')
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  const old = g(root, 'rev-parse', 'HEAD')
  const wt = path.join(root, 'wt')
  g(root, 'worktree', 'add', '-q', '-b', 'helix/b-1', wt, old)
  writeFileSync(path.join(wt, 'a.txt'), 'the attempt\n')
  g(wt, 'commit', '-q', '-am', 'attempt')
  // another landing moves main meanwhile, with an edit of the same line (main is not checked out anywhere it matters: updateRef path)
  g(root, 'switch', '-q', '--detach')
  const side = path.join(root, 'side')
  g(root, 'worktree', 'add', '-q', side, 'main')
  writeFileSync(path.join(side, 'a.txt'), 'the other landing\n')
  g(side, 'commit', '-q', '-am', 'other')
  g(root, 'update-ref', 'refs/heads/main', g(side, 'rev-parse', 'HEAD'))
  g(root, 'worktree', 'remove', '--force', side)
  return {root, wt, old, ws: {bead: 'b', attempt: 1, slot: 1, dir: wt, branch: 'helix/b-1', baseTip: old}}
}

function landBase(root: string, wt: string) {
  return createLandBase({
    root,
    now: () => new Date(),
    git: async () => openRepo(root, gitTestEnv),
    base: async () => 'main',
    baseTip: async () => g(root, 'rev-parse', 'refs/heads/main'),
    wtTop: () => wt,
    trackerFile: (f) => f.startsWith('.ddx/'),
    checkedOutAt: async () => null,
    commitLeftovers: unused,
    abortRebase: unused,
  })
}

const rebaseStopped = (wt: string): boolean => {
  const gitDir = g(wt, 'rev-parse', '--git-dir')
  const abs = path.isAbsolute(gitDir) ? gitDir : path.join(wt, gitDir)
  return existsSync(path.join(abs, 'rebase-merge')) || existsSync(path.join(abs, 'rebase-apply'))
}

describe('a conflict met under the land lock (SPEC 20.4)', () => {
  it('with repairs asked for: the rebase stays stopped and a conflict repair is returned, the base untouched', async () => {
    const {root, wt, old, ws} = movedBase()
    const tip = g(root, 'rev-parse', 'refs/heads/main')
    const r = await landBase(root, wt).landLocked(ws, old, false, true)
    expect(r).toMatchObject({landed: false, preservedRef: null, repair: {kind: 'conflict', onto: tip, paths: ['a.txt']}})
    expect(rebaseStopped(wt)).toBe(true)
    expect(g(root, 'rev-parse', 'refs/heads/main')).toBe(tip)
  })

  it('without: refused with the rebase aborted, the attempt branch as it was', async () => {
    const {root, wt, old, ws} = movedBase()
    const before = g(root, 'rev-parse', 'refs/heads/helix/b-1')
    const r = await landBase(root, wt).landLocked(ws, old, false)
    expect(r).toMatchObject({landed: false, preservedRef: null})
    expect(r).not.toHaveProperty('repair')
    expect((r as {reason: string}).reason).toMatch(/a\.txt/)
    expect(rebaseStopped(wt)).toBe(false)
    expect(g(root, 'rev-parse', 'refs/heads/helix/b-1')).toBe(before)
  })
})
