import {existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {recoverWorktrees, unowned, worktreeChecks} from '../../src/recovery/worktrees.js'
import {projectPaths} from '../../src/util/root.js'
import {agentCommit, branches, g, gitTestEnv, makeRepo, worktrees, write} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

const LATER = () => Date.now() + 120_000

/** four leftover worktrees of a crashed run, a stray directory and a preserved ref */
async function leftovers() {
  const root = makeRepo()
  dirs.push(root)
  const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date()})
  const a = await landing.prepare('hx-a', 1, 1) // committed work, nowhere else
  const aSha = agentCommit(a.dir, 'a-file.ts', 'a\n')
  const b = await landing.prepare('hx-b', 1, 2) // uncommitted work only
  write(b.dir, 'b-file.ts', 'b\n')
  write(b.dir, '.ddx/beads.jsonl', 'copy\n')
  const c = await landing.prepare('hx-c', 1, 3) // no change: merged
  const d = await landing.prepare('hx-d', 1, 4) // work already on a preserved ref
  const dSha = agentCommit(d.dir, 'd-file.ts', 'd\n')
  g(root, 'update-ref', 'refs/helix/preserved/hx-d/0', dSha)
  g(root, 'update-ref', 'refs/helix/preserved/hx-z/1', g(root, 'rev-parse', 'main'))
  mkdirSync(path.join(root, '.helix', 'worktrees', 'stray-1'))
  const paths = projectPaths(root, {})
  return {root, paths, a, b, c, d, aSha}
}

function snapshot(root: string) {
  return {
    refs: g(root, 'for-each-ref', '--format=%(refname) %(objectname)'),
    wts: g(root, 'worktree', 'list', '--porcelain'),
    status: g(path.join(root, '.helix/worktrees/hx-b-1'), 'status', '--porcelain'),
  }
}

describe('doctor: leftovers no run owns', () => {
  it('lists stale worktrees (FAIL, with the fix) and preserved refs (WARN)', async () => {
    const {root, paths} = await leftovers()
    const checks = await worktreeChecks(paths, gitTestEnv)
    expect(checks).toEqual([
      {
        level: 'fail',
        what: 'worktrees',
        detail: '5 stale worktree(s) no run owns: .helix/worktrees/hx-a-1, .helix/worktrees/hx-b-1, .helix/worktrees/hx-c-1, …',
        fix: "run 'helix recover --worktrees' (their work, committed or not, is kept on refs/helix/preserved/ first)",
      },
      expect.objectContaining({level: 'warn', what: 'preserved work', detail: '2 ref(s) under refs/helix/preserved/ of beads not closed, no run owns: refs/helix/preserved/hx-d/0, refs/helix/preserved/hx-z/1'}),
    ])
    expect(root).toBeTruthy()
  })

  it("leaves a --remote run's worktrees out of the recover --worktrees advice (that run finishes or keeps them)", async () => {
    const {root, paths} = await leftovers()
    for (const id of ['hx-a', 'hx-b', 'hx-c', 'hx-d']) {
      const f = path.join(root, '.helix', 'attempts', `${id}-1.json`)
      writeFileSync(f, JSON.stringify({...JSON.parse(readFileSync(f, 'utf8')), remote: 'origin'}))
    }
    const checks = await worktreeChecks(paths, gitTestEnv)
    expect(checks[0]).toEqual({
      level: 'fail',
      what: 'worktrees',
      detail: '1 stale worktree(s) no run owns: .helix/worktrees/stray-1',
      fix: "run 'helix recover --worktrees' (their work, committed or not, is kept on refs/helix/preserved/ first)",
    })
    rmSync(path.join(root, '.helix', 'worktrees', 'stray-1'), {recursive: true})
    // only a --remote run's: no 'run recover' advice, and not 'no stale worktrees' either
    expect((await worktreeChecks(paths, gitTestEnv)).filter((c) => c.what === 'worktrees')).toEqual([])
  })

  it('finds them through a symlinked project path too', async () => {
    const {root} = await leftovers()
    const link = `${root}-link`
    symlinkSync(root, link)
    dirs.push(link)
    const u = await unowned(projectPaths(link, {}), gitTestEnv)
    expect(u.worktrees.map((w) => [w.rel, w.registered, w.branch])).toEqual([
      ['.helix/worktrees/hx-a-1', true, 'helix/hx-a-1'],
      ['.helix/worktrees/hx-b-1', true, 'helix/hx-b-1'],
      ['.helix/worktrees/hx-c-1', true, 'helix/hx-c-1'],
      ['.helix/worktrees/hx-d-1', true, 'helix/hx-d-1'],
      ['.helix/worktrees/stray-1', false, null],
    ])
  })

  it('says nothing outside git, and ok when nothing is left over', async () => {
    const plain = makeTempDir('helix-nogit-')
    dirs.push(plain)
    mkdirSync(path.join(plain, '.ddx'))
    expect(await worktreeChecks(projectPaths(plain, {}), {...gitTestEnv, GIT_CEILING_DIRECTORIES: path.dirname(plain)})).toEqual([])
    const root = makeRepo()
    dirs.push(root)
    expect(await worktreeChecks(projectPaths(root, {}), gitTestEnv)).toEqual([{level: 'ok', what: 'worktrees', detail: 'no stale worktrees'}])
  })

  it('a live run owns the worktrees its workers[] name, their beads’ preserved refs, and worktrees it just made', async () => {
    const {root, paths} = await leftovers()
    const started = new Date(Date.now() - process.uptime() * 1000).toISOString()
    writeFileSync(paths.pidFile, `${process.pid} ${started}\n`)
    writeFileSync(
      paths.runState,
      JSON.stringify({
        workers: [
          {slot: 1, bead: 'hx-a', attempt: 1, started_at: started, worktree: null, branch: 'helix/hx-a-1', pid: null},
          {slot: 2, bead: 'hx-z', attempt: 2, worktree: '.helix/worktrees/hx-b-1', branch: null},
          {slot: 3, bead: 'hx-q', attempt: 1, worktree: path.join(root, '.helix/worktrees/hx-c-1/some/subdir'), branch: null},
        ],
      }),
    )
    const later = await unowned(paths, gitTestEnv, LATER())
    expect(later.worktrees.map((w) => w.rel)).toEqual(['.helix/worktrees/hx-d-1', '.helix/worktrees/stray-1'])
    expect(later.preserved.map((p) => p.ref)).toEqual(['refs/helix/preserved/hx-d/0'])
    // within the first minute every worktree of a live run counts as its own
    expect((await unowned(paths, gitTestEnv)).worktrees).toEqual([])
    // a dead run owns nothing
    writeFileSync(paths.pidFile, `999999999 ${started}\n`)
    expect((await unowned(paths, gitTestEnv)).worktrees).toHaveLength(5)
    expect(root).toBeTruthy()
  })
})

describe('helix recover --worktrees', () => {
  it('keeps a worktree whose uncommitted work cannot be committed', async () => {
    const root = makeRepo()
    dirs.push(root)
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date()})
    const ws = await landing.prepare('hx-1', 1, 1)
    write(ws.dir, 'only-here.ts', 'x\n')
    writeFileSync(path.join(g(ws.dir, 'rev-parse', '--absolute-git-dir'), 'index.lock'), '')
    const lines: string[] = []
    const r = await recoverWorktrees(projectPaths(root, {}), {env: gitTestEnv, dryRun: false, say: (l) => lines.push(l)})
    expect(r.removed).toEqual([])
    expect(lines[0]).toMatch(/^helix: kept worktree \.helix\/worktrees\/hx-1-1: could not commit its uncommitted work \(.*index\.lock/)
    expect(readFileSync(path.join(ws.dir, 'only-here.ts'), 'utf8')).toBe('x\n')
    expect(branches(root)).toEqual(['helix/hx-1-1'])
  })


  it('--dry-run lists and changes nothing', async () => {
    const {root, paths} = await leftovers()
    const before = snapshot(root)
    const lines: string[] = []
    await recoverWorktrees(paths, {env: gitTestEnv, dryRun: true, say: (l) => lines.push(l)})
    expect(lines).toEqual([
      'helix: would remove worktree .helix/worktrees/hx-a-1; branch helix/hx-a-1 would be deleted (work kept at refs/helix/preserved/hx-a/…)',
      'helix: would remove worktree .helix/worktrees/hx-b-1; branch helix/hx-b-1 would be deleted (work kept at refs/helix/preserved/hx-b/…)',
      'helix: would remove worktree .helix/worktrees/hx-c-1; branch helix/hx-c-1 would be deleted (merged)',
      'helix: would remove worktree .helix/worktrees/hx-d-1; branch helix/hx-d-1 would be deleted (work kept at refs/helix/preserved/hx-d/0)',
      'helix: would remove worktree .helix/worktrees/stray-1',
      "helix: 2 preserved ref(s) kept under refs/helix/preserved/ (never removed here; inspect with 'git log -p <ref>')",
    ])
    expect(snapshot(root)).toEqual(before)
    expect(existsSync(path.join(root, '.helix/worktrees/stray-1'))).toBe(true)
  })

  it('removes stale worktrees, keeps unmerged work on a preserved ref (SPEC 18.3a), never deletes a preserved ref', async () => {
    const {root, paths, aSha} = await leftovers()
    const mainBefore = g(root, 'rev-parse', 'main')
    const lines: string[] = []
    const r = await recoverWorktrees(paths, {env: gitTestEnv, dryRun: false, say: (l) => lines.push(l)})
    expect(r.removed).toHaveLength(5)
    expect(lines[1]).toBe('helix: removed worktree .helix/worktrees/hx-b-1; branch helix/hx-b-1 deleted (work kept at refs/helix/preserved/hx-b/1)')
    expect(worktrees(root)).toEqual([root])
    expect(existsSync(path.join(root, '.helix/worktrees/stray-1'))).toBe(false)
    expect(branches(root)).toEqual([])
    expect(g(root, 'rev-parse', 'refs/helix/preserved/hx-a/1')).toBe(aSha)
    expect(g(root, 'log', '-1', '--format=%s', 'refs/helix/preserved/hx-b/1')).toBe('helix: uncommitted work of hx-b attempt 1')
    expect(g(root, 'show', '--format=', '--name-only', 'refs/helix/preserved/hx-b/1')).toBe('b-file.ts')
    expect(g(root, 'for-each-ref', '--format=%(refname)', 'refs/helix/')).toBe(
      'refs/helix/preserved/hx-a/1\nrefs/helix/preserved/hx-b/1\nrefs/helix/preserved/hx-d/0\nrefs/helix/preserved/hx-z/1',
    )
    expect(g(root, 'rev-parse', 'main')).toBe(mainBefore)
    expect(g(root, 'status', '--porcelain')).toBe('')
    // a second pass finds nothing
    const again: string[] = []
    await recoverWorktrees(paths, {env: gitTestEnv, dryRun: false, say: (l) => again.push(l)})
    expect(again[0]).toBe('helix: no stale worktrees')
  })
})
