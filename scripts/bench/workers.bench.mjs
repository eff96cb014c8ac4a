// Parallel workers throughput (SPEC 15.5): 20 independent beads, an
// agent that sleeps 2 s, commits one file and closes its bead; the drain time of
// `helix run --workers 4` vs `--workers 1`, measured side by side in one run.
// Goal: ratio ≤ 0.30 (issue 26). Also checks that every bead landed: 20 commits on main,
// linear history, no helix/* branch or worktree left.
//   BENCH_WORKERS_ROUNDS (default 1) · BENCH_WORKERS_BEADS (default 20) · BENCH_WORKERS_SLEEP_MS (default 2000)
//   BENCH_WORKERS_GIT_ONLY=1: only the per-attempt git figures (no drains, nothing recorded)
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {helixBin, median, record, repoRoot} from './lib.mjs'

const N = Number(process.env.BENCH_WORKERS_BEADS ?? 20)
const SLEEP_MS = Number(process.env.BENCH_WORKERS_SLEEP_MS ?? 2000)
const ROUNDS = Number(process.env.BENCH_WORKERS_ROUNDS ?? 1)
const WIDE = 4
const GOAL = 0.3

const gitEnv = {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'}
function git(cwd, ...args) {
  const r = spawnSync('git', args, {cwd, env: gitEnv, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}

const env = {...gitEnv, NODE_ENV: 'production', HELIX_AUTO_ALIGN: '0', HELIX_BACKOFF_SLEEP: '0', HELIX_KILL_GRACE_MS: '500'}
for (const k of Object.keys(env)) if ((k.startsWith('HELIX_') && !['HELIX_AUTO_ALIGN', 'HELIX_BACKOFF_SLEEP', 'HELIX_KILL_GRACE_MS'].includes(k)) || k.startsWith('DDX_')) delete env[k]

// Needs the scheduler's --workers (branch `loop`); skip cleanly on a build without it.
const help = spawnSync(process.execPath, [helixBin, 'run', '--help'], {env, encoding: 'utf8'})
if (!/--workers/.test(help.stdout ?? '')) {
  console.log('workers: skipped (this build of helix run has no --workers)')
  process.exit(0)
}

function makeProject() {
  const root = mkdtempSync(path.join(tmpdir(), 'helix-workers-bench-'))
  git(root, 'init', '-q', '-b', 'main')
  git(root, 'config', 'user.email', 'bench@example.com')
  git(root, 'config', 'user.name', 'bench')
  writeFileSync(path.join(root, 'README.md'), 'bench\n')
  writeFileSync(path.join(root, '.gitignore'), '.ddx/\n.helix/\n.helix-logs/\n')
  git(root, 'add', '-A')
  git(root, 'commit', '-q', '-m', 'initial')
  mkdirSync(path.join(root, '.ddx'))
  const lines = []
  for (let i = 0; i < N; i++) {
    const id = `hx-${String(i).padStart(8, '0')}`
    lines.push(JSON.stringify({created_at: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`, id, issue_type: 'task', priority: 2, status: 'open', title: `bench bead ${i}`}))
  }
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), lines.join('\n') + '\n')
  return root
}

function makeAgent(dir) {
  const file = path.join(dir, 'worker-agent.mjs')
  const ops = path.join(repoRoot, 'dist', 'tracker', 'ops.js')
  const rootMod = path.join(repoRoot, 'dist', 'util', 'root.js')
  writeFileSync(
    file,
    `#!${process.execPath}
import {spawnSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
const action = process.env.HELIX_ACTION
if (action === 'implementation') {
  const id = process.env.HELIX_BEAD_ID
  await new Promise((r) => setTimeout(r, ${SLEEP_MS}))
  mkdirSync('work', {recursive: true})
  writeFileSync('work/' + id + '.txt', id + '\\n')
  for (const args of [['add', 'work/' + id + '.txt'], ['commit', '-q', '-m', 'work on ' + id]]) {
    const r = spawnSync('git', args, {stdio: 'inherit'})
    if (r.status !== 0) process.exit(1)
  }
  const {closeBead} = await import(${JSON.stringify(ops)})
  const {projectPaths} = await import(${JSON.stringify(rootMod)})
  await closeBead(projectPaths(process.cwd(), process.env), id, {claimToken: process.env.HELIX_CLAIM_TOKEN})
  process.stdout.write('closed ' + id + '\\n')
} else if (action === 'check') {
  process.stdout.write('NEXT_ACTION: STOP\\n')
}
`,
  )
  chmodSync(file, 0o755)
  return file
}

/** one drain; returns wall ms after checking that all N beads landed */
function drain(agent, workers) {
  const root = makeProject()
  try {
    const t0 = process.hrtime.bigint()
    const r = spawnSync(process.execPath, [helixBin, 'run', '--agent', agent, '--no-auto-review', '--summary', '--workers', String(workers)], {cwd: root, env, encoding: 'utf8'})
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    if (r.status !== 0) throw new Error(`helix run --workers ${workers} exited ${r.status}: ${r.stderr.slice(-800)}`)
    const beads = readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const open = beads.filter((b) => b.status !== 'closed').map((b) => b.id)
    const commits = Number(git(root, 'rev-list', '--count', 'main')) - 1
    const merges = Number(git(root, 'rev-list', '--merges', '--count', 'main'))
    const left = git(root, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')
    const trees = existsSync(path.join(root, '.helix', 'worktrees')) ? spawnSync('ls', [path.join(root, '.helix', 'worktrees')], {encoding: 'utf8'}).stdout.trim() : ''
    if (open.length || commits !== N || merges || left || trees)
      throw new Error(`--workers ${workers}: open=${open.join(',')} commits=${commits}/${N} merges=${merges} branches=${left} worktrees=${trees}`)
    return ms
  } finally {
    rmSync(root, {recursive: true, force: true})
  }
}

/**
 * The fixed git cost of one attempt with workers, measured on the real landing adapter
 * (dist/landing/local.js) and a real repository, one attempt after another:
 * `prepare` (free attempt number, base tip, worktree add), `land` (leftovers, checks
 * and rebase in the worktree, then the fast-forward under the land lock, then the
 * cleanup), and of `land` the part that held the land lock, the only part that
 * serializes the slots.
 */
async function gitCostPerAttempt(attempts = 8) {
  const {createGitLanding} = await import(path.join(repoRoot, 'dist', 'landing', 'local.js'))
  const root = mkdtempSync(path.join(tmpdir(), 'helix-workers-git-'))
  const countDir = mkdtempSync(path.join(tmpdir(), 'helix-workers-count-'))
  const ms = async (fn) => {
    const t0 = process.hrtime.bigint()
    const v = await fn()
    return [Number(process.hrtime.bigint() - t0) / 1e6, v]
  }
  try {
    git(root, 'init', '-q', '-b', 'main')
    git(root, 'config', 'user.email', 'bench@example.com')
    git(root, 'config', 'user.name', 'bench')
    mkdirSync(path.join(root, '.ddx'))
    writeFileSync(path.join(root, 'README.md'), 'bench\n')
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), '')
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', 'initial')
    let held = 0
    const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitEnv, now: () => new Date(), onLockHeld: (t) => (held = t)})
    await landing.base()
    const prep = []
    const lands = []
    const locked = []
    for (let i = 0; i < attempts; i++) {
      const id = `hx-${String(i).padStart(8, '0')}`
      const [tp, ws] = await ms(() => landing.prepare(id, 1, 1))
      prep.push(tp)
      // the agent's work
      writeFileSync(path.join(ws.dir, `${id}.txt`), id + '\n')
      git(ws.dir, 'add', '-A')
      git(ws.dir, 'commit', '-q', '-m', `work on ${id}`)
      const [tl, r] = await ms(() => landing.land(ws))
      if (!r.landed) throw new Error(`bench attempt ${id} did not land: ${r.reason}`)
      lands.push(tl)
      locked.push(held)
    }
    // git processes per attempt (prepare, the loop's preservedRef, land), counted by a
    // `git` first on PATH: a figure machine load does not change
    const bin = path.join(countDir, 'bin')
    const counted = path.join(countDir, 'count')
    mkdirSync(bin)
    const realGit = spawnSync('sh', ['-c', 'command -v git'], {encoding: 'utf8'}).stdout.trim()
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho >> '${counted}'\nexec '${realGit}' "$@"\n`)
    chmodSync(path.join(bin, 'git'), 0o755)
    const countingEnv = {...gitEnv, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}`}
    const countingLanding = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: countingEnv, now: () => new Date()})
    await countingLanding.base()
    const rounds = 3
    writeFileSync(counted, '')
    for (let i = 0; i < rounds; i++) {
      const id = `hx-c${String(i).padStart(7, '0')}`
      const ws = await countingLanding.prepare(id, 1, 1)
      await countingLanding.preservedRef(id)
      writeFileSync(path.join(ws.dir, `${id}.txt`), id + '\n')
      git(ws.dir, 'add', '-A')
      git(ws.dir, 'commit', '-q', '-m', `work on ${id}`)
      const r = await countingLanding.land(ws)
      if (!r.landed) throw new Error(`bench attempt ${id} did not land: ${r.reason}`)
    }
    const processes = readFileSync(counted, 'utf8').split('\n').length - 1
    if (git(root, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length !== 1) throw new Error('bench: worktrees left')
    return {prepare: median(prep), land: median(lands), locked: median(locked), processes: processes / rounds}
  } finally {
    rmSync(root, {recursive: true, force: true})
    rmSync(countDir, {recursive: true, force: true})
  }
}

if (process.env.BENCH_WORKERS_GIT_ONLY === '1') {
  const g = await gitCostPerAttempt()
  console.log(`workers (git only): prepare ${g.prepare.toFixed(0)} + land ${g.land.toFixed(0)} ms, lock held ${g.locked.toFixed(0)} ms, ${g.processes.toFixed(1)} git processes per attempt`)
  process.exit(0)
}
const scratch = mkdtempSync(path.join(tmpdir(), 'helix-workers-agent-'))
try {
  const agent = makeAgent(scratch)
  const one = []
  const wide = []
  for (let round = 0; round < ROUNDS; round++) {
    // interleaved, so machine load affects both alike
    wide.push(drain(agent, WIDE))
    one.push(drain(agent, 1))
  }
  const w1 = median(one)
  const wN = median(wide)
  const ratio = wN / w1
  const g = await gitCostPerAttempt()
  const fixed = g.prepare + g.land
  console.log(
    `workers: fixed git cost per attempt ${fixed.toFixed(0)} ms = prepare (worktree add) ${g.prepare.toFixed(0)} + land ${g.land.toFixed(0)} (checks and rebase in the worktree, the fast-forward, the cleanup), of which the land lock was held ${g.locked.toFixed(0)}; ${g.processes.toFixed(1)} git processes per attempt (prepare, preservedRef, land)`,
  )
  record('workers', {w1, wN, ratio, git: g, fixed, beads: N, sleepMs: SLEEP_MS})
  console.log(
    `workers: ${N} beads × ${SLEEP_MS / 1000} s agent: --workers ${WIDE} ${(wN / 1000).toFixed(1)} s vs --workers 1 ${(w1 / 1000).toFixed(1)} s = ${ratio.toFixed(2)} (goal ≤ ${GOAL.toFixed(2)}: ${ratio <= GOAL ? 'met' : 'NOT met'}); all ${N} landed, linear, no helix/* branch or worktree left`,
  )
} finally {
  rmSync(scratch, {recursive: true, force: true})
}
