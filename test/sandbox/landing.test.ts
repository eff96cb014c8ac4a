// landing/sandbox.ts and landing/sandbox-attempts.ts with real git and the real bwrap: the
// private clone, the fenced take-back of the tracker copy, and the work collected
// (leftovers committed inside the sandbox, fetched through a confined upload-pack)
// and landed by the ordinary landing.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {sandboxLanding} from '../../src/landing/sandbox.js'
import {createSandboxAttempts} from '../../src/landing/sandbox-attempts.js'
import {DEFAULT_SANDBOX} from '../../src/proc/sandbox.js'
import {projectPaths} from '../../src/util/root.js'
import {makeTempDir} from '../support/tmp.js'
import {gitSeq} from '../support/git.js'

const hasBwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0
const ENV: NodeJS.ProcessEnv = {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'}
for (const k of Object.keys(ENV)) if (k.startsWith('HELIX_') || k.startsWith('DDX_')) delete ENV[k]
function g(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {cwd, env: ENV, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}
const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
const write = (file: string, beads: Array<Record<string, unknown>>) => writeFileSync(file, beads.map((b) => JSON.stringify(b)).join('\n') + '\n')

function setup() {
  const root = makeTempDir('helix-sbland-')
  mkdirSync(path.join(root, '.ddx'))
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  const claim = {owner: 'helix', 'claimed-at': '2026-01-01T00:00:00Z', 'claimed-pid': process.pid, 'claim-token': 'tok1'}
  write(path.join(root, '.ddx', 'beads.jsonl'), [
    {id: 't-1', title: 'one', status: 'in_progress', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z', ...claim},
    {id: 't-2', title: 'two', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:01Z'},
  ])
  writeFileSync(path.join(root, '.gitignore'), '.helix/\n')
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  const paths = projectPaths(root, ENV)
  const attempts = createSandboxAttempts(DEFAULT_SANDBOX, paths, ENV)
  const inner = createGitLanding({root, trackerDir: paths.dir, env: ENV, now: () => new Date()})
  const landing = sandboxLanding(inner, {root, trackerFile: paths.file, spec: DEFAULT_SANDBOX, env: ENV, attempts, readable: attempts.readable(), timeoutSec: 60})
  return {root, paths, attempts, landing}
}

describe.skipIf(!hasBwrap)('the sandbox landing (SPEC 21.1)', () => {
  it('takes back only the claimed bead and new beads, and nothing once the claim changed hands', async () => {
    const s = setup()
    const ws = await s.landing.prepare('t-1', 1, 1)
    expect(ws.dir.startsWith(path.join(s.root, '.helix', 'sandbox'))).toBe(true)
    const copy = path.join(ws.trackerDir as string, 'beads.jsonl')
    const mine = lines(copy)
    expect(mine[0]['claim-token']).toBe('tok1')
    // the agent closes its bead, edits another, files a new one
    const closed: Record<string, unknown> = {...mine[0], status: 'closed', notes: 'done'}
    for (const k of ['owner', 'claimed-at', 'claimed-pid', 'claim-token']) delete closed[k]
    write(copy, [closed, {...mine[1], title: 'renamed by the agent'}, {id: 't-3', title: 'found', status: 'open', priority: 2, issue_type: 'bug', created_at: '2026-01-02T00:00:00Z'}])
    const a = s.attempts.at(ws.dir)
    expect(a).toBeDefined()
    expect((await s.attempts.takeBack(a!)).sort()).toEqual(['t-1', 't-3'])
    const real = lines(s.paths.file)
    expect(real.map((b) => `${b.id} ${b.status} ${b.title}`)).toEqual(['t-1 closed one', 't-2 open two', 't-3 open found'])
    expect(real[0]['claim-token']).toBeUndefined()
    expect(real[0].notes).toBe('done')

    // fenced: a copy whose claim token is no longer the real one writes nothing of that bead
    const s2 = setup()
    const ws2 = await s2.landing.prepare('t-1', 1, 1)
    const copy2 = path.join(ws2.trackerDir as string, 'beads.jsonl')
    write(copy2, lines(copy2).map((b) => (b.id === 't-1' ? {...b, status: 'closed'} : b)))
    write(s2.paths.file, lines(s2.paths.file).map((b) => (b.id === 't-1' ? {...b, 'claim-token': 'someone-else'} : b)))
    expect(await s2.attempts.takeBack(s2.attempts.at(ws2.dir)!)).toEqual([])
    expect(lines(s2.paths.file)[0].status).toBe('in_progress')
  })

  it("a drain action's take-back: edits of any bead field by field where the real field did not move, new beads, never claim fields", async () => {
    const s = setup()
    const ws = await s.landing.prepare('helix-alignment', 1, 1)
    s.attempts.asAction(ws.bead, ws.attempt)
    const copy = path.join(ws.trackerDir as string, 'beads.jsonl')
    const mine = lines(copy)
    // t-1 is claimed (in the real tracker and the copy); t-2 is open
    write(copy, [
      {...mine[0], title: 'retitled by the alignment', 'claim-token': 'forged'},
      {...mine[1], title: 'two, aligned', priority: 0},
      {id: 't-9', title: 'filed by the alignment', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-02T00:00:00Z', 'claim-token': 'x'},
    ])
    // meanwhile someone else changes t-2's priority in the real tracker: theirs wins for that field
    write(s.paths.file, lines(s.paths.file).map((b) => (b.id === 't-2' ? {...b, priority: 4} : b)))
    const a = s.attempts.get(ws.bead, ws.attempt)!
    expect((await s.attempts.takeBack(a)).sort()).toEqual(['t-1', 't-2', 't-9'])
    const real = lines(s.paths.file)
    expect(real.map((b) => `${b.id} ${b.title} ${String(b.priority)}`)).toEqual(['t-1 retitled by the alignment 2', 't-2 two, aligned 4', 't-9 filed by the alignment 2'])
    expect(real[0]['claim-token']).toBe('tok1')
    expect(real[2]['claim-token']).toBeUndefined()
    // the same edits from an attempt's clone (not an action) travel only for its own claimed bead
    const s2 = setup()
    const ws2 = await s2.landing.prepare('t-1', 1, 1)
    const copy2 = path.join(ws2.trackerDir as string, 'beads.jsonl')
    write(copy2, lines(copy2).map((b) => (b.id === 't-2' ? {...b, title: 'two, aligned'} : b)))
    await s2.attempts.takeBack(s2.attempts.at(ws2.dir)!)
    expect(lines(s2.paths.file)[1].title).toBe('two')
  })

  it('lands the clone\'s commits and its uncommitted work; the clone and copy are gone', async () => {
    const s = setup()
    const tip0 = g(s.root, 'rev-parse', 'main')
    const ws = await s.landing.prepare('t-1', 1, 1)
    writeFileSync(path.join(ws.dir, 'a.txt'), 'committed\n')
    g(ws.dir, 'add', 'a.txt')
    g(ws.dir, 'commit', '-q', '-m', 'work')
    writeFileSync(path.join(ws.dir, 'b.txt'), 'left uncommitted\n')
    const r = await s.landing.land(ws)
    expect(r.landed, JSON.stringify(r)).toBe(true)
    expect(g(s.root, 'rev-list', '--count', `${tip0}..main`)).toBe('2')
    expect(g(s.root, 'show', 'main:b.txt')).toBe('left uncommitted')
    expect(g(s.root, 'log', '-1', '--format=%s', 'main')).toBe('helix: uncommitted work of t-1 attempt 1')
    expect(readdirSync(path.join(s.root, '.helix', 'sandbox'))).toEqual([])
    expect(existsSync(path.join(s.root, '.helix', 'worktrees', 't-1-1'))).toBe(false)
  })

  it('preserves the work of an attempt that does not land, committed inside the sandbox', async () => {
    const s = setup()
    const ws = await s.landing.prepare('t-1', 1, 1)
    writeFileSync(path.join(ws.dir, 'c.txt'), 'half done\n')
    const ref = await s.landing.preserve(ws, 'the agent failed')
    expect(ref).toBe('refs/helix/preserved/t-1/1')
    expect(g(s.root, 'show', `${ref}:c.txt`)).toBe('half done')
    expect(readdirSync(path.join(s.root, '.helix', 'sandbox'))).toEqual([])
  })

  it('a run that died left its clone: the next start collects the work into the worktree, then removes the clone', async () => {
    const s = setup()
    const ws = await s.landing.prepare('t-1', 1, 1)
    writeFileSync(path.join(ws.dir, 'd.txt'), 'work of a run killed with -9\n')
    // the next run: a fresh landing over the same project
    const attempts = createSandboxAttempts(DEFAULT_SANDBOX, s.paths, ENV)
    const inner = createGitLanding({root: s.root, trackerDir: s.paths.dir, env: ENV, now: () => new Date()})
    const again = sandboxLanding(inner, {root: s.root, trackerFile: s.paths.file, spec: DEFAULT_SANDBOX, env: ENV, attempts, readable: attempts.readable(), timeoutSec: 60})
    const left = await again.leftovers!()
    expect(left.map((l) => `${l.bead} ${l.attempt}`)).toEqual(['t-1 1'])
    expect(g(s.root, 'show', 'refs/heads/helix/t-1-1:d.txt')).toBe('work of a run killed with -9')
    expect(readdirSync(path.join(s.root, '.helix', 'sandbox'))).toEqual([])
  })
})

