// Shared benchmark helpers: every figure is a ratio to `node -e 0`, measured
// side by side (interleaved) in the same run so machine load affects both.
import {spawnSync} from 'node:child_process'
import {appendFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const helixBin = path.join(repoRoot, 'bin', 'run.js')

function timeOnce(cmd, args, opts) {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(cmd, args, {stdio: ['ignore', 'ignore', 'pipe'], ...opts})
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${String(r.stderr).slice(0, 500)}`)
  return ms
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * Times `node -e 0` and `node bin/run.js ...args` alternately `runs` times.
 * Returns medians in ms and the ratio.
 */
export function compareToNode(args, {cwd, env = {}, runs = 9} = {}) {
  const base = []
  const cmd = []
  const fullEnv = {...process.env, NODE_ENV: 'production', ...env}
  for (let i = 0; i < runs; i++) {
    base.push(timeOnce(process.execPath, ['-e', '0'], {cwd, env: fullEnv}))
    cmd.push(timeOnce(process.execPath, [helixBin, ...args], {cwd, env: fullEnv}))
  }
  const nodeMs = median(base)
  const helixMs = median(cmd)
  return {nodeMs, helixMs, ratio: helixMs / nodeMs}
}

export function report(label, {nodeMs, helixMs, ratio}, goal) {
  const verdict = goal === undefined ? '' : ratio <= goal ? `  (goal ≤ ${goal}: met)` : `  (goal ≤ ${goal}: NOT met)`
  console.log(`${label}: ${ratio.toFixed(2)}× node -e 0  [helix ${helixMs.toFixed(0)} ms, node ${nodeMs.toFixed(0)} ms]${verdict}`)
}

/**
 * Keep one figure for the summary `npm run bench` prints at the end (scripts/bench.mjs
 * sets HELIX_BENCH_RESULTS); a bench run on its own just prints its lines.
 */
export function record(key, data) {
  const file = process.env.HELIX_BENCH_RESULTS
  if (file) appendFileSync(file, JSON.stringify({key, ...data}) + '\n')
}
