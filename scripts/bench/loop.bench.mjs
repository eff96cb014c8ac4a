// Supervisor overhead per cycle (SPEC 11: ≤ 50 ms; docs/performance.md: ≤ 1.0× `node -e 0`),
// on a 20-bead tracker and on a 10,000-bead 5 MB one (20 open, the rest closed; every
// bead with a 300-character description, as real trackers have), side by side in one run. A command agent that closes its bead at once (by importing the built
// store directly, so the agent itself is cheap). Overhead per cycle =
// (wall time of `helix run --max-cycles 20` − the same agent run 20× directly) / 20.
// `--review-every 0`: the periodic alignment (every 15 completions by default) is one more
// agent call, agent cost that the 20 direct runs do not subtract; it is not the supervisor's.
import {spawnSync} from 'node:child_process'
import {chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {helixBin, median, record, repoRoot} from './lib.mjs'

const N = 20
// HELIX_BENCH_ROUNDS / HELIX_BENCH_SIZES (comma list) narrow a run while profiling
const ROUNDS = Number(process.env.HELIX_BENCH_ROUNDS ?? 3)

function makeProject(total = N) {
  const root = mkdtempSync(path.join(tmpdir(), 'helix-loop-bench-'))
  mkdirSync(path.join(root, '.ddx'))
  const lines = []
  for (let i = 0; i < total; i++) {
    const id = `hx-${String(i).padStart(8, '0')}`
    const status = i < N ? 'open' : 'closed'
    const description = `Bead ${i}: ` + 'context the agent reads before it starts; '.repeat(8).slice(0, 300 - `Bead ${i}: `.length)
    const acceptance = `1. Part ${i} works.\n2. No regressions in the suite.`
    lines.push(JSON.stringify({acceptance, created_at: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z`, description, id, issue_type: 'task', labels: ['helix', 'phase:build'], priority: 2, status, title: `bench bead ${i}`, updated_at: '2026-01-01T00:00:00Z'}))
  }
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), lines.join('\n') + '\n')
  return root
}

function makeAgent(dir) {
  const file = path.join(dir, 'instant-agent.mjs')
  const ops = path.join(repoRoot, 'dist', 'tracker', 'ops.js')
  const rootMod = path.join(repoRoot, 'dist', 'util', 'root.js')
  writeFileSync(
    file,
    `#!${process.execPath}
const action = process.env.HELIX_ACTION
if (action === 'implementation') {
  const {closeBead} = await import(${JSON.stringify(ops)})
  const {projectPaths} = await import(${JSON.stringify(rootMod)})
  await closeBead(projectPaths(process.cwd(), process.env), process.env.HELIX_BEAD_ID, {claimToken: process.env.HELIX_CLAIM_TOKEN})
  process.stdout.write('closed ' + process.env.HELIX_BEAD_ID + '\\n')
} else if (action === 'check') {
  process.stdout.write('NEXT_ACTION: STOP\\n')
}
`,
  )
  chmodSync(file, 0o755)
  return file
}

function time(fn) {
  const t0 = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const scratch = mkdtempSync(path.join(tmpdir(), 'helix-loop-agent-'))
const agent = makeAgent(scratch)
// The supervisor's own CPU time (not its children's): far less sensitive to other load
// on the machine than wall time. A preload appends `<pid> <ms>` at exit.
const cpuPreload = path.join(scratch, 'cpu.cjs')
const cpuOut = path.join(scratch, 'cpu.txt')
writeFileSync(cpuPreload, `process.on('exit', () => { const u = process.cpuUsage(); require('fs').appendFileSync(${JSON.stringify(cpuOut)}, process.pid + ' ' + (u.user + u.system) / 1000 + '\\n') })\n`)
function cpuOf(pid) {
  const line = readFileSync(cpuOut, 'utf8').split('\n').find((l) => l.startsWith(pid + ' '))
  return line ? Number(line.split(' ')[1]) : NaN
}
const cpus = new Map()
const env = {...process.env, NODE_ENV: 'production', HELIX_AUTO_ALIGN: '0'}
const sizes = process.env.HELIX_BENCH_SIZES ? process.env.HELIX_BENCH_SIZES.split(',').map(Number) : [N, 10_000]
const overheads = new Map(sizes.map((n) => [n, []]))
const megabytes = new Map()
const nodes = []
for (let round = 0; round < ROUNDS; round++) {
  for (const total of sizes) {
    nodes.push(time(() => spawnSync(process.execPath, ['-e', '0'])))
    // the agent alone, 20×, on its own tracker of the same size
    const direct = makeProject(total)
    const agentMs = time(() => {
      for (let i = 0; i < N; i++) {
        const id = `hx-${String(i).padStart(8, '0')}`
        const r = spawnSync(agent, [], {cwd: direct, env: {...env, HELIX_ACTION: 'implementation', HELIX_BEAD_ID: id}, input: 'prompt'})
        if (r.status !== 0) throw new Error(`agent failed: ${r.stderr}`)
      }
    })
    // the same work through the supervisor
    const project = makeProject(total)
    megabytes.set(total, statSync(path.join(project, '.ddx', 'beads.jsonl')).size / 1e6)
    const runMs = time(() => {
      const r = spawnSync(process.execPath, [helixBin, 'run', '--agent', agent, '--no-auto-review', '--review-every', '0', '--max-cycles', String(N), '--summary'], {cwd: project, env: {...env, NODE_OPTIONS: `--require ${cpuPreload}`}, encoding: 'utf8'})
      if (r.status !== 0) throw new Error(`helix run exited ${r.status}: ${r.stderr}`)
      cpus.set(total, [...(cpus.get(total) ?? []), cpuOf(r.pid)])
    })
    nodes.push(time(() => spawnSync(process.execPath, ['-e', '0'])))
    overheads.get(total).push((runMs - agentMs) / N)
    rmSync(direct, {recursive: true, force: true})
    rmSync(project, {recursive: true, force: true})
  }
}
rmSync(scratch, {recursive: true, force: true})
const nodeMs = median(nodes)
for (const total of sizes) {
  const perCycle = median(overheads.get(total))
  const ratio = perCycle / nodeMs
  const verdict = ratio <= 1 ? 'met' : 'NOT met'
  console.log(
    `loop (${total} beads, ${megabytes.get(total).toFixed(1)} MB): supervisor overhead per cycle ${perCycle.toFixed(1)} ms = ${ratio.toFixed(2)}× node -e 0 [node ${nodeMs.toFixed(0)} ms] (goal ≤ 1.0×: ${verdict}; SPEC ≤ 50 ms: ${perCycle <= 50 ? 'met' : 'NOT met'})`,
  )
  const cpu = median(cpus.get(total)) / N
  console.log(`  supervisor CPU (own, not its children's) ${cpu.toFixed(1)} ms per cycle, startup included (load-insensitive cross-check)`)
  record(`loop-${total}`, {perCycle, nodeMs, ratio, cpu, mb: megabytes.get(total)})
}
