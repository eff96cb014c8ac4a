// The landing's one look in the attempt's worktree (`rev-parse --git-path … --symbolic-full-name
// HEAD`, session 27): a half-done rebase is aborted and the attempt lands; a worktree that
// is not on its branch is refused whether the one look saw it or a hook moved it after the
// leftover commit; and the loop's preservedRef right after prepare answers from prepare's list.
// Under the land lock (session 30): the for-each-ref of both tips also says, by %(HEAD), whether
// the root has the base checked out, so the common landing runs no symbolic-ref.
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {agentCommit, g, gitTestEnv, makeRepo, write} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function setup() {
  const root = makeRepo('helix-land-look-')
  dirs.push(root)
  const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date('2026-11-27T05:00:00Z'), lockWaitMs: 60_000})
  return {root, landing}
}

const A = (first: string) => `${first}\nline2\nline3\nline4\nline5\n`

describe('the one look in the worktree', () => {
  it('a rebase a killed helix left half done is aborted, and the attempt lands', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', A('agent'), 'agent work')
    // a commit the attempt conflicts with, on a side ref: the rebase onto it stops half done
    const side = g(root, 'commit-tree', '-p', 'main', '-m', 'side', g(root, 'mktree'))
    const rb = spawnSync('git', ['rebase', '-q', side], {cwd: ws.dir, env: gitTestEnv, encoding: 'utf8'})
    expect(rb.status).not.toBe(0)
    expect(existsSync(path.resolve(ws.dir, g(ws.dir, 'rev-parse', '--git-path', 'rebase-merge')))).toBe(true)
    const r = await landing.land(ws)
    expect(r).toMatchObject({landed: true})
    expect(g(root, 'show', 'main:a.ts')).toBe(A('agent').trimEnd())
    expect(g(root, 'log', '-1', '--format=%s', 'main')).toBe('agent work')
  })

  it('a worktree switched to another branch is refused, its work preserved', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-2', 1, 1)
    const before = g(root, 'rev-parse', 'main')
    g(ws.dir, 'switch', '-q', '-c', 'elsewhere')
    agentCommit(ws.dir, 'a.ts', A('elsewhere'))
    const r = await landing.land(ws)
    expect(r).toMatchObject({landed: false, reason: `the worktree is no longer on its branch ${ws.branch}`, preservedRef: 'refs/helix/preserved/hx-2/1'})
    expect(g(root, 'show', 'refs/helix/preserved/hx-2/1:a.ts')).toBe(A('elsewhere').trimEnd())
    expect(g(root, 'rev-parse', 'main')).toBe(before)
  })

  it('a detached HEAD is refused the same way', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-3', 1, 1)
    agentCommit(ws.dir, 'a.ts', A('detached'))
    g(ws.dir, 'switch', '-q', '--detach')
    const before = g(root, 'rev-parse', 'main')
    const r = await landing.land(ws)
    expect(r).toMatchObject({landed: false, reason: `the worktree is no longer on its branch ${ws.branch}`})
    expect(g(root, 'rev-parse', 'main')).toBe(before)
  })

  it("a hook that switches branches during the leftover commit is seen: HEAD is asked again after it", async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-4', 1, 1)
    const hook = path.join(g(root, 'rev-parse', '--path-format=absolute', '--git-common-dir'), 'hooks', 'post-commit')
    writeFileSync(hook, '#!/bin/sh\ngit switch -q -c moved-by-hook\n')
    chmodSync(hook, 0o755)
    write(ws.dir, 'left.ts', 'left uncommitted\n')
    const before = g(root, 'rev-parse', 'main')
    const r = await landing.land(ws)
    expect(r).toMatchObject({landed: false, reason: `the worktree is no longer on its branch ${ws.branch}`})
    expect(g(root, 'rev-parse', 'main')).toBe(before)
  })
})

describe("prepare's one listing", () => {
  it('answers the preservedRef asked right after it (the newest by number), then asks git again', async () => {
    const {root, landing} = setup()
    const tip = g(root, 'rev-parse', 'main')
    g(root, 'update-ref', 'refs/helix/preserved/hx-5/1', tip)
    g(root, 'update-ref', 'refs/helix/preserved/hx-5/4', tip)
    const ws = await landing.prepare('hx-5', 1, 1)
    // attempt 1 is taken by its preserved ref; the base tip came from the same listing
    expect(ws.attempt).toBe(2)
    expect(ws.baseTip).toBe(tip)
    expect(await landing.preservedRef('hx-5')).toBe('refs/helix/preserved/hx-5/4')
    // answered once: a ref written by hand since is seen on the next ask
    g(root, 'update-ref', 'refs/helix/preserved/hx-5/7', tip)
    expect(await landing.preservedRef('hx-5')).toBe('refs/helix/preserved/hx-5/7')
    await landing.preserve(ws, 'test over')
  })

  it('a preserved ref the landing writes after prepare is not hidden by the listing', async () => {
    const {landing} = setup()
    const ws = await landing.prepare('hx-6', 1, 1)
    agentCommit(ws.dir, 'a.ts', A('kept'))
    expect(await landing.preserve(ws, 'kept for the test')).toBe('refs/helix/preserved/hx-6/1')
    expect(await landing.preservedRef('hx-6')).toBe('refs/helix/preserved/hx-6/1')
  })
})

describe('under the land lock', () => {
  /** a landing whose git calls are logged by a `git` first on PATH */
  function counted() {
    const root = makeRepo('helix-land-head-')
    dirs.push(root)
    const bin = makeTempDir('helix-land-head-bin-')
    dirs.push(bin)
    const log = path.join(bin, 'calls')
    const real = spawnSync('sh', ['-c', 'command -v git'], {encoding: 'utf8'}).stdout.trim()
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`)
    chmodSync(path.join(bin, 'git'), 0o755)
    const env = {...gitTestEnv, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`}
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env, now: () => new Date('2026-11-27T05:00:00Z'), lockWaitMs: 60_000})
    const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [])
    return {root, landing, calls}
  }

  it('the root on the base: the tips and where the base is checked out come from one for-each-ref (no symbolic-ref, no worktree list)', async () => {
    const {root, landing, calls} = counted()
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', A('agent'), 'agent work')
    const from = calls().length
    expect(await landing.land(ws)).toMatchObject({landed: true})
    const during = calls().slice(from)
    expect(during.some((c) => c.startsWith('symbolic-ref') || c.startsWith('worktree list'))).toBe(false)
    expect(during.filter((c) => c.startsWith('for-each-ref') && c.includes('%(HEAD)'))).toHaveLength(1)
    expect(g(root, 'log', '-1', '--format=%s', 'main')).toBe('agent work')
    // the root's work tree followed the fast-forward (merge --ff-only ran in the root)
    expect(readFileSync(path.join(root, 'a.ts'), 'utf8')).toBe(A('agent'))
  })

  it('the root on another branch, the base checked out in a worktree: the list finds it and the base moves there', async () => {
    const {root, landing, calls} = counted()
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', A('agent'), 'agent work')
    const elsewhere = makeTempDir('helix-land-head-base-')
    dirs.push(elsewhere)
    rmSync(elsewhere, {recursive: true, force: true})
    g(root, 'switch', '-q', '-c', 'other')
    g(root, 'worktree', 'add', '-q', elsewhere, 'main')
    const from = calls().length
    expect(await landing.land(ws)).toMatchObject({landed: true})
    expect(calls().slice(from).some((c) => c.startsWith('worktree list'))).toBe(true)
    expect(g(root, 'log', '-1', '--format=%s', 'main')).toBe('agent work')
    expect(readFileSync(path.join(elsewhere, 'a.ts'), 'utf8')).toBe(A('agent'))
    // the root's own branch did not move
    expect(g(root, 'log', '-1', '--format=%s', 'other')).not.toBe('agent work')
    g(root, 'worktree', 'remove', '--force', elsewhere)
  })
})
