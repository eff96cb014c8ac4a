import {spawnSync} from 'node:child_process'
import {chmodSync, cpSync, existsSync, readFileSync, rmSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {HelixError} from '../../src/util/errors.js'
import {agentCommit, branches, g, gitTestEnv, makeRepo, read, worktrees, write} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

const dirs: string[] = []
// makeRepo's repository made once for the file, each test gets a copy of it (files and .git,
// no process): 31 tests × a git init, two configs, an add and a commit were ~180 processes
let template = ''
beforeAll(() => {
  template = makeRepo('helix-landing-template-')
})
function makeRepoCopy(): string {
  const root = makeTempDir('helix-landing-')
  cpSync(template, root, {recursive: true})
  return root
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function setup(opts: {identity?: boolean; lockWaitMs?: number} = {}) {
  const root = makeRepoCopy()
  dirs.push(root)
  if (opts.identity === false) {
    g(root, 'config', '--unset', 'user.email')
    g(root, 'config', '--unset', 'user.name')
  }
  const logs: string[] = []
  const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date('2026-11-23T12:00:00Z'), log: (l) => logs.push(l), lockWaitMs: opts.lockWaitMs ?? 2000})
  return {root, landing, logs}
}

const mainTip = (root: string) => g(root, 'rev-parse', 'refs/heads/main')
const merges = (root: string) => g(root, 'rev-list', '--merges', '--count', 'main')

describe('base()', () => {
  it('names the branch checked out in the root', async () => {
    const {landing} = setup()
    expect(await landing.base()).toBe('main')
  })

  it('refuses a detached HEAD with the fix', async () => {
    const {root, landing} = setup()
    g(root, 'switch', '-q', '--detach')
    await expect(landing.base()).rejects.toThrow(/^helix run: --workers needs a git checkout on a branch \(HEAD is detached.*git switch/)
    await expect(landing.base()).rejects.toBeInstanceOf(HelixError)
  })

  it('refuses a directory outside git', async () => {
    const dir = makeTempDir('helix-nogit-')
    dirs.push(dir)
    const landing = createGitLanding({root: dir, trackerDir: path.join(dir, '.ddx'), env: {...gitTestEnv, GIT_CEILING_DIRECTORIES: path.dirname(dir)}, now: () => new Date()})
    await expect(landing.base()).rejects.toThrow(/needs a git checkout on a branch \(.* is not in a git repository\)/)
  })
})

describe('ensureExcludes()', () => {
  it('writes the runtime paths to info/exclude once', async () => {
    const {root, landing} = setup()
    await landing.ensureExcludes()
    await landing.ensureExcludes()
    const text = readFileSync(path.join(root, '.git', 'info', 'exclude'), 'utf8')
    expect(text.match(/^\.helix\/$/gm)).toHaveLength(1)
    expect(text).toContain('.ddx/run-state.json')
  })
})

describe('prepare → land', () => {
  it('fast-forwards the base, keeps history linear, leaves no branch or worktree', async () => {
    const {root, landing} = setup()
    const before = mainTip(root)
    const ws = await landing.prepare('hx-1', 1, 2)
    expect(ws).toMatchObject({slot: 2, bead: 'hx-1', attempt: 1, branch: 'helix/hx-1-1', baseTip: before, dir: path.join(root, '.helix/worktrees/hx-1-1')})
    expect(g(ws.dir, 'symbolic-ref', '--short', 'HEAD')).toBe('helix/hx-1-1')
    const sha = agentCommit(ws.dir, 'c.ts', 'new file\n')
    // runtime files in the worktree are ignored through info/exclude
    write(ws.dir, '.helix/context.md', 'ctx')
    const r = await landing.land(ws)
    expect(r).toEqual({landed: true, sha, commits: [sha]})
    expect(mainTip(root)).toBe(sha)
    expect(g(root, 'rev-parse', `${sha}^`)).toBe(before)
    expect(merges(root)).toBe('0')
    expect(read(root, 'c.ts')).toBe('new file\n') // root checkout moved with the base
    expect(branches(root)).toEqual([])
    expect(worktrees(root)).toEqual([root])
    expect(existsSync(ws.dir)).toBe(false)
    expect(g(root, 'status', '--porcelain')).toBe('')
  })

  it('lists every landed commit oldest first, whatever their dates say (the verify after the fast-forward lists them)', async () => {
    const {root, landing} = setup()
    const before = mainTip(root)
    const ws = await landing.prepare('hx-1', 1, 1)
    // committer dates out of order: a walk by date alone would not give the chain's order
    const shas: string[] = []
    for (const [i, date] of ['2030-01-01T00:00:00Z', '2001-01-01T00:00:00Z', '2015-01-01T00:00:00Z'].entries()) {
      write(ws.dir, `f${i}.ts`, `${i}\n`)
      g(ws.dir, 'add', '-A')
      spawnSync('git', ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.com', 'commit', '-q', '-m', `step ${i}`], {cwd: ws.dir, env: {...gitTestEnv, GIT_COMMITTER_DATE: date, GIT_AUTHOR_DATE: date}})
      shas.push(g(ws.dir, 'rev-parse', 'HEAD'))
    }
    const r = await landing.land(ws)
    expect(r).toEqual({landed: true, sha: shas[2], commits: shas})
    expect(g(root, 'rev-list', '--reverse', `${before}..main`).split('\n')).toEqual(shas)
  })

  it('rebases onto a base that moved, and commits work the agent left uncommitted', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(root, 'b.ts', 'export const b = 2\n', 'operator commit')
    write(ws.dir, 'c.ts', 'left uncommitted\n')
    const r = await landing.land(ws)
    expect(r.landed).toBe(true)
    if (!r.landed) return
    expect(r.commits).toHaveLength(1)
    expect(g(root, 'log', '-1', '--format=%s', 'main')).toBe('helix: uncommitted work of hx-1 attempt 1')
    expect(read(root, 'b.ts')).toBe('export const b = 2\n')
    expect(read(root, 'c.ts')).toBe('left uncommitted\n')
    expect(merges(root)).toBe('0')
  })

  it('two attempts on the same line: the first lands, the second is preserved with the file named', async () => {
    const {root, landing} = setup()
    const a = await landing.prepare('hx-a', 1, 1)
    const b = await landing.prepare('hx-b', 3, 2)
    agentCommit(a.dir, 'a.ts', 'A\nline2\nline3\nline4\nline5\n')
    const bSha = agentCommit(b.dir, 'a.ts', 'B\nline2\nline3\nline4\nline5\n')
    const ra = await landing.land(a)
    expect(ra.landed).toBe(true)
    const tip = mainTip(root)
    const rb = await landing.land(b)
    expect(rb).toEqual({landed: false, reason: 'conflict in a.ts', preservedRef: 'refs/helix/preserved/hx-b/3'})
    expect(mainTip(root)).toBe(tip)
    expect(g(root, 'rev-parse', 'refs/helix/preserved/hx-b/3')).toBe(bSha)
    expect(g(root, 'show', 'refs/helix/preserved/hx-b/3:a.ts')).toBe('B\nline2\nline3\nline4\nline5')
    expect(branches(root)).toEqual([])
    expect(worktrees(root)).toEqual([root])
    expect(await landing.preservedRef('hx-b')).toBe('refs/helix/preserved/hx-b/3')
    expect(g(root, 'status', '--porcelain')).toBe('')
  })

  it('lands two attempts at once one after the other (in-process land lock)', async () => {
    // the second waits for the first's whole landing: generous on a loaded machine
    const {root, landing} = setup({lockWaitMs: 60_000})
    const a = await landing.prepare('hx-a', 1, 1)
    const b = await landing.prepare('hx-b', 1, 2)
    agentCommit(a.dir, 'x.ts', 'x\n')
    agentCommit(b.dir, 'y.ts', 'y\n')
    const [ra, rb] = await Promise.all([landing.land(a), landing.land(b)])
    expect([ra, rb]).toEqual([expect.objectContaining({landed: true}), expect.objectContaining({landed: true})])
    expect(g(root, 'rev-list', '--count', 'main')).toBe('3')
    expect(merges(root)).toBe('0')
    expect(read(root, 'x.ts') + read(root, 'y.ts')).toBe('x\ny\n')
  })

  it("leaves the operator's dirty files byte for byte, and refuses when the merge would overwrite them", async () => {
    const {root, landing} = setup()
    const dirty = 'line1\noperator edit\r\n\u0000bytes\n'
    write(root, 'a.ts', dirty)
    write(root, 'notes.txt', 'untracked operator file\n')
    const ws1 = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws1.dir, 'b.ts', 'export const b = 3\n')
    expect((await landing.land(ws1)).landed).toBe(true)
    expect(read(root, 'a.ts')).toBe(dirty)
    expect(read(root, 'notes.txt')).toBe('untracked operator file\n')
    expect(read(root, 'b.ts')).toBe('export const b = 3\n')

    const tip = mainTip(root)
    const ws2 = await landing.prepare('hx-2', 1, 1)
    const sha2 = agentCommit(ws2.dir, 'a.ts', 'agent\nline2\nline3\nline4\nline5\n')
    const r = await landing.land(ws2)
    expect(r.landed).toBe(false)
    if (r.landed) return
    expect(r.reason).toBe('the project root has uncommitted changes the merge would overwrite (a.ts)')
    expect(r.preservedRef).toBe('refs/helix/preserved/hx-2/1')
    expect(g(root, 'rev-parse', r.preservedRef!)).toBe(sha2)
    expect(mainTip(root)).toBe(tip)
    expect(read(root, 'a.ts')).toBe(dirty)
    expect(read(root, 'notes.txt')).toBe('untracked operator file\n')
    expect(branches(root)).toEqual([])
  })

  it('moves the base with compare-and-set update-ref when the root has another branch checked out', async () => {
    const {root, landing} = setup()
    expect(await landing.base()).toBe('main')
    g(root, 'switch', '-q', '-c', 'operator-branch')
    write(root, 'a.ts', 'operator dirty\n')
    const ws = await landing.prepare('hx-1', 1, 1)
    const sha = agentCommit(ws.dir, 'c.ts', 'c\n')
    const r = await landing.land(ws)
    expect(r).toEqual({landed: true, sha, commits: [sha]})
    expect(mainTip(root)).toBe(sha)
    expect(g(root, 'symbolic-ref', '--short', 'HEAD')).toBe('operator-branch')
    expect(existsSync(path.join(root, 'c.ts'))).toBe(false)
    expect(read(root, 'a.ts')).toBe('operator dirty\n')
    expect(g(root, 'reflog', '-1', '--format=%gs', 'main')).toMatch(/^helix: landed hx-1 attempt 1/)
  })

  it('refuses commits that touch .ddx/ and keeps them on a preserved ref', async () => {
    const {root, landing} = setup()
    const tip = mainTip(root)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'c.ts', 'c\n')
    const sha = agentCommit(ws.dir, '.ddx/beads.jsonl', '{"id":"hx-1","status":"closed"}\n')
    const r = await landing.land(ws)
    expect(r).toEqual({landed: false, reason: "the attempt's commits touch the tracker (.ddx/beads.jsonl); commits must never carry .ddx/", preservedRef: 'refs/helix/preserved/hx-1/1'})
    expect(mainTip(root)).toBe(tip)
    expect(g(root, 'rev-parse', 'refs/helix/preserved/hx-1/1')).toBe(sha)
  })

  it('lands even when the worktree tracker copy was modified but not committed (it is discarded, never committed)', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(root, '.ddx/beads.jsonl', '{"id":"hx-1","status":"closed"}\n', 'operator commits the tracker')
    write(ws.dir, '.ddx/beads.jsonl', 'worktree copy edited\n')
    write(ws.dir, 'c.ts', 'c\n')
    g(ws.dir, 'add', 'c.ts')
    g(ws.dir, '-c', 'user.name=Agent', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'c only')
    const r = await landing.land(ws)
    expect(r.landed).toBe(true)
    expect(read(root, '.ddx/beads.jsonl')).toBe('{"id":"hx-1","status":"closed"}\n')
    expect(g(root, 'log', '--format=', '--name-only', 'main', '-1')).toBe('c.ts')
  })
})

describe('a project reached through a symlink', () => {
  it('lands and preserves, leaving no worktree registered', async () => {
    const repo = makeRepoCopy()
    const link = `${repo}-link`
    symlinkSync(repo, link)
    dirs.push(repo, link)
    const landing = createGitLanding({root: link, trackerDir: path.join(link, '.ddx'), env: gitTestEnv, now: () => new Date()})
    const a = await landing.prepare('hx-a', 1, 1)
    const b = await landing.prepare('hx-b', 1, 2)
    agentCommit(a.dir, 'x.ts', 'x\n')
    agentCommit(b.dir, 'y.ts', 'y\n')
    expect((await landing.land(a)).landed).toBe(true)
    expect(await landing.preserve(b, 'FAILED')).toBe('refs/helix/preserved/hx-b/1')
    expect(worktrees(repo)).toEqual([repo])
    expect(branches(repo)).toEqual([])
  })
})

describe('a project in a subdirectory of the repository', () => {
  it("the agent's cwd is the same subdirectory inside the worktree; its tracker is refused there too", async () => {
    const repo = makeRepoCopy()
    dirs.push(repo)
    write(repo, 'sub/.ddx/beads.jsonl', '{"id":"hx-1"}\n')
    write(repo, 'sub/app.ts', 'app\n')
    g(repo, 'add', '-A')
    g(repo, 'commit', '-q', '-m', 'sub project')
    const root = path.join(repo, 'sub')
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date()})
    const ws = await landing.prepare('hx-1', 1, 1)
    expect(ws.dir).toBe(path.join(root, '.helix/worktrees/hx-1-1/sub'))
    expect(read(ws.dir, 'app.ts')).toBe('app\n')
    const sha = agentCommit(ws.dir, 'app.ts', 'app v2\n')
    expect(await landing.land(ws)).toEqual({landed: true, sha, commits: [sha]})
    expect(read(root, 'app.ts')).toBe('app v2\n')
    const ws2 = await landing.prepare('hx-1', 2, 1)
    agentCommit(ws2.dir, '.ddx/beads.jsonl', '{"id":"hx-1","status":"closed"}\n')
    const r = await landing.land(ws2)
    expect(r.landed).toBe(false)
    if (!r.landed) expect(r.reason).toMatch(/touch the tracker \(sub\/\.ddx\/beads\.jsonl\)/)
    expect(worktrees(repo)).toEqual([repo])
  })
})

describe('a base that keeps moving while landing', () => {
  // a post-rewrite hook (runs after each rebase) advances main by an empty commit,
  // as an operator committing at that very moment would: the fast-forward loses the race
  function racingBase(limit: number) {
    const root = makeRepoCopy()
    dirs.push(root)
    const hook = path.join(root, '.git', 'hooks', 'post-rewrite')
    write(root, '.git/hooks/post-rewrite', `#!/bin/sh
n=$(cat "$RACE_COUNTER" 2>/dev/null || echo 0)
[ "$n" -ge ${limit} ] && exit 0
echo $((n + 1)) > "$RACE_COUNTER"
c=$(git commit-tree -p refs/heads/main -m "operator $n" refs/heads/main^{tree})
git update-ref refs/heads/main "$c"
`)
    chmodSync(hook, 0o755)
    const env = {...gitTestEnv, RACE_COUNTER: path.join(root, '.git', 'race-counter')}
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env, now: () => new Date()})
    return {root, landing}
  }

  it('rebases again onto the new tip and lands', async () => {
    const {root, landing} = racingBase(1)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(root, 'b.ts', 'export const b = 9\n', 'operator commit')
    agentCommit(ws.dir, 'c.ts', 'c\n')
    const r = await landing.land(ws)
    expect(r.landed).toBe(true)
    expect(g(root, 'log', '--format=%s', 'main').split('\n')).toEqual(['edit c.ts', 'operator 0', 'operator commit', 'initial'])
    expect(merges(root)).toBe('0')
  })

  it('gives up after three rounds: not landed, work preserved, base history intact', async () => {
    const {root, landing} = racingBase(10)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(root, 'b.ts', 'export const b = 9\n', 'operator commit')
    agentCommit(ws.dir, 'c.ts', 'c\n')
    const r = await landing.land(ws)
    expect(r).toEqual({landed: false, reason: 'the base branch main kept moving during landing', preservedRef: 'refs/helix/preserved/hx-1/1'})
    // one rebase before the land lock, then three rounds under it, each lost to the hook's commit
    expect(g(root, 'log', '--format=%s', 'main').split('\n')).toEqual(['operator 3', 'operator 2', 'operator 1', 'operator 0', 'operator commit', 'initial'])
    expect(g(root, 'show', '--format=', '--name-only', 'refs/helix/preserved/hx-1/1')).toBe('c.ts')
    expect(branches(root)).toEqual([])
  })
})

describe('land lock held by another process', () => {
  it('gives up after the wait: not landed, the work preserved, the base untouched', async () => {
    const {mkdirSync, writeFileSync} = await import('node:fs')
    const {spawn} = await import('node:child_process')
    const root = makeRepoCopy()
    dirs.push(root)
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date(), lockWaitMs: 300})
    const ws = await landing.prepare('hx-1', 1, 1)
    const sha = agentCommit(ws.dir, 'c.ts', 'c\n')
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {stdio: 'ignore'})
    try {
      const lock = path.join(root, '.git', 'helix-land.lock')
      mkdirSync(lock)
      writeFileSync(path.join(lock, 'owner'), `${holder.pid} ${new Date().toISOString()}\n`)
      const tip = mainTip(root)
      const r = await landing.land(ws)
      expect(r).toEqual({landed: false, reason: `land lock ${lock} held by pid ${holder.pid} for more than 0 s`, preservedRef: 'refs/helix/preserved/hx-1/1'})
      expect(mainTip(root)).toBe(tip)
      expect(g(root, 'rev-parse', 'refs/helix/preserved/hx-1/1')).toBe(sha)
    } finally {
      holder.kill('SIGKILL')
    }
  })
})

describe('preserve()', () => {
  it('commits uncommitted work as one commit (never .ddx/) onto refs/helix/preserved/<id>/<n>', async () => {
    const {root, landing} = setup({identity: false})
    const ws = await landing.prepare('hx-1', 2, 1)
    const c1 = agentCommit(ws.dir, 'c.ts', 'c\n')
    write(ws.dir, 'a.ts', 'changed\n')
    write(ws.dir, 'new/d.ts', 'd\n')
    write(ws.dir, '.ddx/beads.jsonl', 'tracker copy edit\n')
    g(ws.dir, 'add', '.ddx/beads.jsonl') // even staged by the agent
    const ref = await landing.preserve(ws, 'FAILED')
    expect(ref).toBe('refs/helix/preserved/hx-1/2')
    expect(g(root, 'log', '-1', '--format=%s|%an', ref!)).toBe('helix: uncommitted work of hx-1 attempt 2|helix')
    expect(g(root, 'rev-parse', `${ref}^`)).toBe(c1)
    expect(g(root, 'show', '--format=', '--name-only', ref!).split('\n').sort()).toEqual(['a.ts', 'new/d.ts'])
    expect(branches(root)).toEqual([])
    expect(worktrees(root)).toEqual([root])
    // the next attempt number skips the preserved one
    const next = await landing.prepare('hx-1', 2, 1)
    expect(next.attempt).toBe(3)
    expect(await landing.preserve(next, 'interrupted')).toBeNull()
  })

  it('tells beforeRemove the kept ref while the worktree and branch still exist (an owed reopen is recorded before they go)', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'c.ts', 'c\n')
    const seen: string[] = []
    const ref = await landing.preserve(ws, 'FAILED', {
      beforeRemove: async (kept, why) => {
        seen.push(`${kept} ${why} ${existsSync(ws.dir)} ${branches(root).join(',')}`)
      },
    })
    expect(ref).toBe('refs/helix/preserved/hx-1/1')
    expect(seen).toEqual(['refs/helix/preserved/hx-1/1 FAILED true helix/hx-1-1'])
    expect(branches(root)).toEqual([])
  })

  it('work it cannot commit (a stale index.lock of a killed git) keeps the worktree; commits are still preserved', async () => {
    const {root, landing, logs} = setup()
    const ws = await landing.prepare('hx-1', 1, 1)
    const sha = agentCommit(ws.dir, 'c.ts', 'c\n')
    write(ws.dir, 'd.ts', 'only here\n')
    const gitDir = g(ws.dir, 'rev-parse', '--absolute-git-dir')
    write(gitDir, 'index.lock', '')
    expect(await landing.preserve(ws, 'interrupted')).toBe('refs/helix/preserved/hx-1/1')
    expect(g(root, 'rev-parse', 'refs/helix/preserved/hx-1/1')).toBe(sha)
    expect(read(ws.dir, 'd.ts')).toBe('only here\n')
    expect(branches(root)).toEqual(['helix/hx-1-1'])
    expect(logs.at(-1)).toBe('helix: kept worktree .helix/worktrees/hx-1-1 and branch helix/hx-1-1: it holds uncommitted work helix could not commit')
    // and landing refuses rather than losing it
    const r = await landing.land(ws)
    expect(r.landed).toBe(false)
    expect(existsSync(ws.dir)).toBe(true)
    rmSync(path.join(gitDir, 'index.lock'))
  })

  it('no change at all: null, no ref, branch and worktree gone', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-1', 1, 1)
    write(ws.dir, '.helix/context.md', 'runtime file only')
    expect(await landing.preserve(ws, 'NOT_COMPLETED')).toBeNull()
    expect(g(root, 'for-each-ref', 'refs/helix/')).toBe('')
    expect(branches(root)).toEqual([])
    expect(existsSync(ws.dir)).toBe(false)
    expect(await landing.preservedRef('hx-1')).toBeNull()
  })
})

describe('keepBranch() and ids', () => {
  it('--land none keeps the branch with its work and removes the worktree', async () => {
    const {root, landing} = setup()
    const tip = mainTip(root)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'c.ts', 'c\n')
    write(ws.dir, 'd.ts', 'd\n')
    expect(await landing.keepBranch(ws)).toBe('helix/hx-1-1')
    expect(branches(root)).toEqual(['helix/hx-1-1'])
    expect(g(root, 'rev-list', '--count', `${tip}..helix/hx-1-1`)).toBe('2')
    expect(mainTip(root)).toBe(tip)
    expect(existsSync(ws.dir)).toBe(false)
    // a kept branch is never reused by a later attempt
    expect((await landing.prepare('hx-1', 1, 1)).attempt).toBe(2)
  })

  it.each(['a b', '../x', '-rf', 'x..y', 'x.lock', 'x\u001b[2J', 'a/b', 'x~1', ''])('refuses the id %j before touching git', async (id) => {
    const {root, landing} = setup()
    await expect(landing.prepare(id, 1, 1)).rejects.toThrow(/cannot name a git branch for --workers/)
    expect(existsSync(path.join(root, '.helix'))).toBe(false)
    expect(await landing.preservedRef(id)).toBeNull()
  })

  it('a refused id prints no control characters', async () => {
    const {landing} = setup()
    const e = await landing.prepare('x\u001b[2Jy', 1, 1).catch((error: Error) => error)
    expect((e as Error).message).not.toMatch(/\u001b/)
  })
})
