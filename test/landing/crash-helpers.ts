// A real `--workers` project for the crash and landing tests (SPEC 18): a git repo
// with a committed tracker, and a stub agent that commits in its worktree, closes
// its bead in the shared tracker, and can be told per bead to wait, leave work
// uncommitted, or answer QUOTA after its close. Uses the built dist/.
// A binding of the rig: the project is helixProject's, the CLI runs through cli.ts.
import type {ChildProcess} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {REPO, runCli, startCli} from '../support/cli.js'
import {git as g, gitEnv, GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'
import {helixProjectSync} from '../support/project.js'

export {BIN, REPO} from '../support/cli.js'
export {g, gitEnv}

export interface Plan {
  /** before the commit */
  sleepMs?: number
  /** after the close */
  sleepAfterCloseMs?: number
  /** leave the change uncommitted (helix commits it) */
  noCommit?: boolean
  /** what the agent prints after closing (e.g. a quota message) */
  answer?: string
  /** exit code after the close */
  rc?: number
  /** edit this line of shared.ts instead of a file of its own */
  sharedLine?: number
}

export interface Project {
  root: string
  stub: string
  env: NodeJS.ProcessEnv
  args: (workers: number, more?: string[]) => string[]
  calls: () => Array<Record<string, any>>
  tracked: () => Map<string, Record<string, any>>
  setPlans: (plans: Record<string, Plan>) => void
}

/** `beads` are written open, oldest first; `random` gives each unplanned bead a random sleep below that many ms */
export function project(ids: string[], plans: Record<string, Plan> = {}, opts: {random?: number; extra?: Array<Record<string, unknown>>} = {}): Project {
  const beads = [...ids.map((id) => ({id})), ...(opts.extra ?? [])].map((b, i) => ({created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), ...b}))
  const made = helixProjectSync({prefix: 'helix-crash-', beads, files: {'shared.ts': 'line1\nline2\nline3\n'}, git: true, commitAll: true})
  const {root, tracker} = made
  const stub = path.join(made.base, 'stub')
  mkdirSync(stub)
  writeFileSync(path.join(stub, 'plans.json'), JSON.stringify(plans))
  const agent = path.join(stub, 'agent.mjs')
  const ops = path.join(REPO, 'dist', 'tracker', 'ops.js')
  const rootMod = path.join(REPO, 'dist', 'util', 'root.js')
  writeFileSync(
    agent,
    `import {spawnSync} from 'node:child_process'
import {appendFileSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
const stub = process.env.WSTUB
const action = process.env.HELIX_ACTION
const rec = (o) => appendFileSync(stub + '/calls.jsonl', JSON.stringify({...o, pid: process.pid, at: Date.now()}) + '\\n')
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const random = ${JSON.stringify(opts.random ?? 0)}
if (action === 'implementation') {
  const id = process.env.HELIX_BEAD_ID
  const plan = JSON.parse(readFileSync(stub + '/plans.json', 'utf8'))[id] ?? {}
  rec({bead: id, phase: 'start', cwd: process.cwd()})
  await sleep(plan.sleepMs ?? Math.floor(Math.random() * random))
  if (plan.sharedLine) {
    const lines = readFileSync('shared.ts', 'utf8').split('\\n')
    lines[plan.sharedLine - 1] = id
    writeFileSync('shared.ts', lines.join('\\n'))
  } else writeFileSync(id + '.ts', id + '\\n')
  if (!plan.noCommit) for (const args of [['add', '-A', '.', ':!.ddx'], ['commit', '-q', '-m', 'work on ' + id]]) if (spawnSync('git', args).status !== 0) process.exit(1)
  rec({bead: id, phase: 'committed'})
  const {closeBead} = await import(${JSON.stringify(ops)})
  const {projectPaths} = await import(${JSON.stringify(rootMod)})
  await closeBead(projectPaths(process.cwd(), process.env), id, {claimToken: process.env.HELIX_CLAIM_TOKEN})
  rec({bead: id, phase: 'closed'})
  await sleep(plan.sleepAfterCloseMs ?? Math.floor(Math.random() * random))
  process.stdout.write((plan.answer ?? 'closed ' + id) + '\\n')
  process.exit(plan.rc ?? 0)
} else if (action === 'review' && process.env.HELIX_AGENT_CHECK === '1') {
  // the run's review preflight: answer at once, leave no trace
  process.stdout.write('REVIEW_STATUS: CLEAN\\n')
} else if (action === 'review') {
  rec({phase: 'review'})
  await sleep(existsSync(stub + '/review-sleep') ? Number(readFileSync(stub + '/review-sleep', 'utf8')) : Math.floor(Math.random() * random))
  process.stdout.write('looks fine\\nREVIEW_STATUS: CLEAN\\n')
} else if (action === 'check') {
  process.stdout.write('NEXT_ACTION: STOP\\n')
} else if (action === 'resolve') {
  // SPEC 20.4: keep the attempt's side of every conflicted file and finish the rebase
  rec({bead: process.env.HELIX_BEAD_ID, phase: 'resolve'})
  await sleep(Math.floor(Math.random() * random))
  for (let n = 0; n < 20; n++) {
    const files = spawnSync('git', ['diff', '--name-only', '--diff-filter=U'], {encoding: 'utf8'}).stdout.split('\\n').filter(Boolean)
    if (files.length === 0) break
    for (const f of files) for (const args of [['checkout', '--theirs', '--', f], ['add', '--', f]]) spawnSync('git', args)
    spawnSync('git', ['-c', 'core.editor=true', 'rebase', '--continue'], {stdio: 'ignore'})
  }
}
`,
  )
  // what needs no node is answered by the sh in front (a node start is ~70 ms of CPU here, sh ~2):
  // the run's closing check and its review preflight; it execs the node agent (same pid) for the rest
  const front = path.join(stub, 'agent')
  writeFileSync(
    front,
    `#!/bin/sh
if [ "$HELIX_ACTION" = check ]; then echo 'NEXT_ACTION: STOP'; exit 0; fi
if [ "$HELIX_ACTION" = review ] && [ "$HELIX_AGENT_CHECK" = 1 ]; then echo 'REVIEW_STATUS: CLEAN'; exit 0; fi
exec '${process.execPath}' '${agent}' "$@"
`,
  )
  chmodSync(front, 0o755)
  const env: NodeJS.ProcessEnv = {...made.env, ...GIT_ISOLATION, WSTUB: stub}
  const args = (workers: number, more: string[] = []) => ['run', '--agent', front, '--workers', String(workers), ...more]
  const calls = (): Array<Record<string, any>> =>
    existsSync(path.join(stub, 'calls.jsonl'))
      ? readFileSync(path.join(stub, 'calls.jsonl'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : []
  const tracked = (): Map<string, Record<string, any>> => new Map(readFileSync(tracker, 'utf8').split('\n').filter(Boolean).map((l) => [JSON.parse(l).id, JSON.parse(l)]))
  const setPlans = (p: Record<string, Plan>) => writeFileSync(path.join(stub, 'plans.json'), JSON.stringify(p))
  return {root, stub, env, args, calls, tracked, setPlans}
}

export function runSync(p: Project, workers: number, more: string[] = [], cwd = p.root) {
  const r = runCli(p.args(workers, more), {cwd, env: p.env})
  return {code: r.code, stdout: r.stdout, stderr: r.stderr, out: r.stdout + r.stderr}
}

export function helix(p: Project, args: string[], cwd = p.root) {
  const r = runCli(args, {cwd, env: p.env})
  return {code: r.code, out: (r.stdout ?? '') + (r.stderr ?? '')}
}

/** runSync in the test's own process (src/; the agents are still processes): for what a run prints and writes */
export async function runIn(p: Project, workers: number, more: string[] = [], cwd = p.root) {
  const r = await helixInProcess(cwd, p.args(workers, more), p.env)
  return {code: r.code, stdout: r.stdout, stderr: r.stderr, out: r.stdout + r.stderr}
}

/** helix in the test's own process */
export async function helixIn(p: Project, args: string[], cwd = p.root) {
  const r = await helixInProcess(cwd, args, p.env)
  return {code: r.code, out: r.stdout + r.stderr}
}

export function start(p: Project, workers: number, more: string[] = []): {child: ChildProcess; done: Promise<{code: number | null; signal: NodeJS.Signals | null}>; output: () => string} {
  const c = startCli(p.args(workers, more), {cwd: p.root, env: p.env, stdin: 'ignore'})
  return {child: c.child, done: c.done.then(({code, signal}) => ({code, signal})), output: () => c.output}
}

// the one wait of the test rig (test/support/wait.ts)
export {waitFor} from '../support/wait.js'

/** the commits on main whose subject is `work on <id>` (or helix's leftover commit of it) */
export function landedCount(root: string, id: string): number {
  return g(root, 'log', '--format=%s', 'main')
    .split('\n')
    .filter((s) => s === `work on ${id}` || s.startsWith(`helix: uncommitted work of ${id} attempt`)).length
}

/**
 * SPEC 18.1 after a run: every closed bead's work is on main exactly once, every
 * open bead none; no helix worktree or branch left; every agent commit reachable.
 * Returns the violations (empty when the invariant holds).
 */
export function invariant(p: Project, ids: string[]): string[] {
  const bad: string[] = []
  const t = p.tracked()
  for (const id of ids) {
    const st = t.get(id)?.status
    const n = landedCount(p.root, id)
    if (st === 'closed' && n !== 1) bad.push(`${id} closed with ${n} landing(s) on main`)
    if (st !== 'closed' && n !== 0) bad.push(`${id} ${st} but ${n} landing(s) on main`)
  }
  const branches = g(p.root, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')
  if (branches) bad.push(`branches left: ${branches.replace(/\n/g, ' ')}`)
  const wts = g(p.root, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length
  if (wts !== 1) bad.push(`${wts - 1} worktree(s) left`)
  // every agent commit, or its rebased copy, is on main or on a preserved ref
  const kept = new Set(g(p.root, 'log', '--format=%s', 'main', '--glob=refs/helix/preserved/*').split('\n'))
  for (const id of new Set(p.calls().filter((c) => c.phase === 'committed').map((c) => c.bead as string)))
    if (!kept.has(`work on ${id}`) && !kept.has(`helix: uncommitted work of ${id} attempt 1`) && ![...kept].some((s) => s.startsWith(`helix: uncommitted work of ${id} `)))
      bad.push(`agent commit of ${id} unreachable`)
  if (g(p.root, 'rev-list', '--merges', '--count', 'main') !== '0') bad.push('merge commits on main')
  return bad
}
