// SPEC 20.4 with --sandbox (21.1), the landing alone with real git and the real bwrap:
// a conflict and a red land check found in helix's worktree are put into the agent's
// private clone (by a confined git), the clone stays while the repair is pending, the
// resolved (rewritten) history is taken back and lands; a clone left with a stopped
// rebase by a crash gives back the attempt's work from before the rebase.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {sandboxLanding} from '../../src/landing/sandbox.js'
import {createSandboxAttempts} from '../../src/landing/sandbox-attempts.js'
import {DEFAULT_SANDBOX} from '../../src/proc/sandbox.js'
import {projectPaths} from '../../src/util/root.js'
import type {Repair, Workspace} from '../../src/loop/ports.js'
import {makeTempDir} from '../support/tmp.js'
import {gitSeq} from '../support/git.js'

const hasBwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0
const ENV: NodeJS.ProcessEnv = {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'}
for (const k of Object.keys(ENV)) if (k.startsWith('HELIX_') || k.startsWith('DDX_')) delete ENV[k]
function g(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {cwd, env: {...ENV, GIT_EDITOR: 'true'}, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}
const MARKER = /^(<<<<<<< |=======|>>>>>>> )/m
// the team's check: red while shared.txt holds a line "bad"
const CHECK = `echo "checking $HELIX_BEAD_ID"; if grep -qx bad shared.txt; then echo "shared.txt holds bad"; exit 1; fi`

function setup(check = false) {
  const root = makeTempDir('helix-sbresolve-')
  mkdirSync(path.join(root, '.ddx'))
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  const bead = (id: string) => JSON.stringify({id, title: id, status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'})
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), `${bead('t-1')}\n${bead('t-2')}\n`)
  writeFileSync(path.join(root, '.gitignore'), '.helix/\n')
  writeFileSync(path.join(root, 'shared.txt'), 'start\n')
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  const paths = projectPaths(root, ENV)
  const make = () => {
    const attempts = createSandboxAttempts(DEFAULT_SANDBOX, paths, ENV)
    const landCheck = check ? {command: CHECK, timeoutSec: 60, stallSec: 0, graceMs: 200} : undefined
    const inner = createGitLanding({root, trackerDir: paths.dir, env: ENV, now: () => new Date(), ...(landCheck ? {landCheck} : {})})
    return sandboxLanding(inner, {root, trackerFile: paths.file, spec: DEFAULT_SANDBOX, env: ENV, attempts, readable: attempts.readable(), timeoutSec: 60})
  }
  return {root, landing: make(), make}
}

/** the agent's commit in its clone: shared.txt's line replaced */
function work(ws: Workspace, line: string): void {
  writeFileSync(path.join(ws.dir, 'shared.txt'), `${line}\n`)
  g(ws.dir, 'commit', '-q', '-am', `work: ${line}`)
}
const sandboxDir = (root: string) => path.join(root, '.helix', 'sandbox')
const worktree = (root: string, id: string) => path.join(root, '.helix', 'worktrees', id)
const inProgress = (dir: string) => ['rebase-merge', 'rebase-apply'].some((p) => existsSync(path.resolve(dir, g(dir, 'rev-parse', '--git-path', p))))

describe.skipIf(!hasBwrap)('resolve for sandboxed attempts (SPEC 20.4, 21.1)', () => {
  it('a conflict goes to the clone; the resolved, rewritten history lands; the clone goes only then', async () => {
    const s = setup()
    const a = await s.landing.prepare('t-1', 1, 1)
    const b = await s.landing.prepare('t-2', 1, 2)
    work(a, 'line by t-1')
    work(b, 'line by t-2')
    const mine = g(b.dir, 'rev-parse', 'HEAD')
    expect((await s.landing.land(a, {repair: true})).landed).toBe(true)
    const r = await s.landing.land(b, {repair: true})
    expect(r.landed).toBe(false)
    const repair = (r as {repair?: Repair}).repair
    expect(repair).toMatchObject({kind: 'conflict', paths: ['shared.txt'], onto: g(s.root, 'rev-parse', 'main')})
    // the conflict is in the clone (rebase stopped, markers), not in helix's worktree (rebase aborted, on the work)
    expect(inProgress(b.dir)).toBe(true)
    expect(readFileSync(path.join(b.dir, 'shared.txt'), 'utf8')).toMatch(MARKER)
    const wt = worktree(s.root, 't-2-1')
    expect(inProgress(wt)).toBe(false)
    expect(g(wt, 'rev-parse', 'HEAD')).toBe(mine)
    expect(await s.landing.commitsOf!(b, repair!.onto)).toEqual([expect.stringMatching(/^[0-9a-f]+ work: line by t-2$/)])
    // not done while the rebase is stopped
    expect(await s.landing.verifyRepair!(b, repair!)).toBe('a rebase, merge or cherry-pick is still in progress')
    // the agent resolves: both lines, rebase continued (history rewritten onto the base tip)
    writeFileSync(path.join(b.dir, 'shared.txt'), 'line by t-1\nline by t-2\n')
    g(b.dir, 'add', 'shared.txt')
    g(b.dir, 'rebase', '--continue')
    expect(await s.landing.verifyRepair!(b, repair!)).toBeNull()
    expect(g(wt, 'rev-parse', 'HEAD')).toBe(g(b.dir, 'rev-parse', 'HEAD'))
    expect(existsSync(b.dir)).toBe(true)
    const landed = await s.landing.land(b, {repair: true})
    expect(landed.landed, JSON.stringify(landed)).toBe(true)
    expect(g(s.root, 'show', 'main:shared.txt')).toBe('line by t-1\nline by t-2')
    expect(readdirSync(sandboxDir(s.root))).toEqual([])
    expect(existsSync(wt)).toBe(false)
  }, 180_000)

  it('markers left in a committed resolution are refused; without repair the conflict is not landed as before', async () => {
    const s = setup()
    const a = await s.landing.prepare('t-1', 1, 1)
    const b = await s.landing.prepare('t-2', 1, 2)
    const c = await s.landing.prepare('t-1', 2, 3)
    work(a, 'line by t-1')
    work(b, 'line by t-2')
    work(c, 'again by t-1')
    await s.landing.land(a)
    const r = await s.landing.land(b, {repair: true})
    const repair = (r as {repair?: Repair}).repair!
    g(b.dir, 'add', 'shared.txt')
    g(b.dir, 'rebase', '--continue')
    expect(await s.landing.verifyRepair!(b, repair)).toBe('shared.txt still holds a conflict marker')
    // rounds spent: preserved (what the worktree holds), and the clone goes
    expect(await s.landing.preserve(b, 'not resolved')).toBe('refs/helix/preserved/t-2/1')
    expect(readdirSync(sandboxDir(s.root)).sort()).toEqual(['t-1-2', 't-1-2.tracker'])
    // --resolve-attempts 0: no repair asked, a conflict is not landed and the work is preserved
    const nr = await s.landing.land(c)
    expect(nr).toMatchObject({landed: false, reason: 'conflict in shared.txt', preservedRef: 'refs/helix/preserved/t-1/2'})
    expect(readdirSync(sandboxDir(s.root))).toEqual([])
  }, 180_000)

  it('a red check: the clone is moved to the candidate, the log is readable, a fix commit lands', async () => {
    const s = setup(true)
    const a = await s.landing.prepare('t-1', 1, 1)
    writeFileSync(path.join(a.dir, 'other.txt'), 'x\n')
    g(a.dir, 'add', 'other.txt')
    g(a.dir, 'commit', '-q', '-m', 'other')
    expect((await s.landing.land(a, {repair: true})).landed).toBe(true)
    const b = await s.landing.prepare('t-2', 1, 2)
    work(b, 'bad')
    const r = await s.landing.land(b, {repair: true})
    const repair = (r as {repair?: Repair}).repair!
    expect(repair).toMatchObject({kind: 'check', rc: 1, tail: ['checking t-2', 'shared.txt holds bad']})
    // the clone holds the candidate: rebased onto the tip (other.txt there), its branch checked out
    expect(g(b.dir, 'rev-parse', 'HEAD')).toBe(g(worktree(s.root, 't-2-1'), 'rev-parse', 'HEAD'))
    expect(readFileSync(path.join(b.dir, 'other.txt'), 'utf8')).toBe('x\n')
    expect(g(b.dir, 'symbolic-ref', 'HEAD')).toBe('refs/heads/helix/t-2-1')
    // the check's log is readable inside the sandbox (a confined cat)
    const cat = spawnSync('bwrap', ['--ro-bind', '/', '/', '--tmpfs', '/tmp', '--ro-bind', s.root, s.root, '--unshare-pid', 'cat', repair.kind === 'check' ? String(repair.logFile) : ''], {encoding: 'utf8'})
    expect(cat.stdout).toContain('shared.txt holds bad')
    // the agent fixes it with a commit (uncommitted would do too: committed confined)
    writeFileSync(path.join(b.dir, 'shared.txt'), 'good\n')
    expect(await s.landing.verifyRepair!(b, repair)).toBeNull()
    const landed = await s.landing.land(b, {repair: true})
    expect(landed.landed, JSON.stringify(landed)).toBe(true)
    expect(g(s.root, 'show', 'main:shared.txt')).toBe('good')
    expect(readdirSync(sandboxDir(s.root))).toEqual([])
  }, 180_000)

  it('a crash while a conflict waits in the clone: the next start collects the work from before the rebase', async () => {
    const s = setup()
    const a = await s.landing.prepare('t-1', 1, 1)
    const b = await s.landing.prepare('t-2', 1, 2)
    work(a, 'line by t-1')
    work(b, 'line by t-2')
    await s.landing.land(a)
    const r = await s.landing.land(b, {repair: true})
    expect((r as {repair?: Repair}).repair?.kind).toBe('conflict')
    // the agent was half way (a file edited during the stopped rebase) when helix died
    writeFileSync(path.join(b.dir, 'shared.txt'), 'half resolved\n')
    const mine = g(worktree(s.root, 't-2-1'), 'rev-parse', 'HEAD')
    const again = s.make()
    const left = await again.leftovers!()
    expect(left.map((l) => `${l.bead} ${l.attempt}`)).toEqual(['t-2 1'])
    // the branch holds the attempt's own work, nothing of the stopped rebase
    expect(g(s.root, 'rev-parse', 'refs/heads/helix/t-2-1')).toBe(mine)
    expect(g(s.root, 'show', 'refs/heads/helix/t-2-1:shared.txt')).toBe('line by t-2')
    expect(readdirSync(sandboxDir(s.root))).toEqual([])
  }, 180_000)

  it("moving helix's worktree to the resolved history keeps its own tracker copy (--remote's layout) and its skip-worktree flag", async () => {
    const s = setup()
    const paths = projectPaths(s.root, ENV)
    const attempts = createSandboxAttempts(DEFAULT_SANDBOX, paths, ENV)
    const local = createGitLanding({root: s.root, trackerDir: paths.dir, env: ENV, now: () => new Date()})
    // as the remote landing does (SPEC 19.2): the worktree's tracker is the attempt's own, hidden from git
    const inner = {
      ...local,
      async prepare(bead: string, attempt: number, slot: number) {
        const ws = await local.prepare(bead, attempt, slot)
        const file = path.join(ws.dir, '.ddx', 'beads.jsonl')
        writeFileSync(file, `${readFileSync(file, 'utf8')}{"id":"mine-${bead}"}\n`)
        g(ws.dir, 'update-index', '--skip-worktree', '--', '.ddx/beads.jsonl')
        return {...ws, trackerDir: path.join(ws.dir, '.ddx')}
      },
    }
    const landing = sandboxLanding(inner, {root: s.root, trackerFile: paths.file, spec: DEFAULT_SANDBOX, env: ENV, attempts, readable: attempts.readable(), timeoutSec: 60})
    const a = await landing.prepare('t-1', 1, 1)
    const b = await landing.prepare('t-2', 1, 2)
    work(a, 'line by t-1')
    work(b, 'line by t-2')
    expect((await landing.land(a, {repair: true})).landed).toBe(true)
    const repair = ((await landing.land(b, {repair: true})) as {repair?: Repair}).repair!
    expect(repair.kind).toBe('conflict')
    writeFileSync(path.join(b.dir, 'shared.txt'), 'line by t-1\nline by t-2\n')
    g(b.dir, 'add', 'shared.txt')
    g(b.dir, 'rebase', '--continue')
    const wt = worktree(s.root, 't-2-1')
    const before = readFileSync(path.join(wt, '.ddx', 'beads.jsonl'), 'utf8')
    expect(await landing.verifyRepair!(b, repair)).toBeNull()
    expect(g(wt, 'rev-parse', 'HEAD')).toBe(g(b.dir, 'rev-parse', 'HEAD'))
    expect(readFileSync(path.join(wt, '.ddx', 'beads.jsonl'), 'utf8')).toBe(before)
    expect(before).toContain('"mine-t-2"')
    expect(g(wt, 'ls-files', '-v', '--', '.ddx/beads.jsonl')).toBe('S .ddx/beads.jsonl')
    expect(g(wt, 'show', 'HEAD:shared.txt')).toBe('line by t-1\nline by t-2')
  }, 180_000)
})
