// `helix status --json` on a temp copy of the real 966-bead helix tracker,
// as a ratio to `node -e 0` (SPEC 11: goal ≤ 3×, stretch 2×).
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {compareToNode, median, report, repoRoot} from './lib.mjs'

const real = process.env.HELIX_REAL_TRACKER ?? path.resolve(repoRoot, '..', '..', 'shared', 'fixtures', 'real-trackers', 'helix-beads.jsonl')
const fallback = '/work/shared/fixtures/real-trackers/helix-beads.jsonl'
const dir = mkdtempSync(path.join(tmpdir(), 'helix-status-bench-'))
try {
  mkdirSync(path.join(dir, '.ddx'))
  try {
    copyFileSync(real, path.join(dir, '.ddx', 'beads.jsonl'))
  } catch {
    copyFileSync(fallback, path.join(dir, '.ddx', 'beads.jsonl'))
  }
  const runs = Number(process.env.BENCH_RUNS ?? 11)
  report('helix status --json (966 beads)', compareToNode(['status', '--json'], {cwd: dir, runs}), 3)
  report('helix status (text, 966 beads)', compareToNode(['status'], {cwd: dir, runs}), 3)

  // The same through the oclif-free fast path (src/status/fast-path.ts), as
  // bin/run.js would call it: what a startup fast path buys.
  const fast = path.join(repoRoot, 'dist', 'status', 'fast-path.js')
  if (existsSync(fast)) {
    const entry = path.join(dir, 'fast-entry.mjs')
    writeFileSync(entry, `const a = process.argv.slice(2)\nconst {statusFastPath} = await import(${JSON.stringify(fast)})\nif (!(await statusFastPath(a))) process.exit(99)\n`)
    const env = {...process.env, NODE_ENV: 'production'}
    const time = (args) => {
      const t0 = process.hrtime.bigint()
      const r = spawnSync(process.execPath, args, {cwd: dir, env, stdio: 'ignore'})
      if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}`)
      return Number(process.hrtime.bigint() - t0) / 1e6
    }
    const base = []
    const cmd = []
    for (let i = 0; i < runs; i++) {
      base.push(time(['-e', '0']))
      cmd.push(time([entry, 'status', '--json']))
    }
    const nodeMs = median(base)
    const helixMs = median(cmd)
    report('helix status --json via fast path (966 beads)', {nodeMs, helixMs, ratio: helixMs / nodeMs}, 2)
  }
} finally {
  rmSync(dir, {recursive: true, force: true})
}
