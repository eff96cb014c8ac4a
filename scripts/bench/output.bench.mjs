// Agent output handling (SPEC 14.5): `helix run` with a command agent that prints
// ONE 100 MB line must finish with helix's peak RSS under 200 MB, in linear time.
// (Before the fix: 20 MB took 4.6 s / 422 MB, 100 MB more than 60 s / 1.35 GB.)
// Peak RSS is helix's own VmHWM, read by GNU time (`/usr/bin/time -f %M`) when
// present, else by polling /proc/<pid>/status. A baseline run whose agent prints
// one short line is measured beside it.
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {helixBin} from './lib.mjs'

const MB = 1024 * 1024
const SIZE = Number(process.env.HELIX_BENCH_LINE_MB || 100) * MB
const GOAL_MB = 200

function makeProject(bytes) {
  const base = mkdtempSync(path.join(tmpdir(), 'helix-output-bench-'))
  const root = path.join(base, 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  writeFileSync(
    path.join(root, '.ddx', 'beads.jsonl'),
    JSON.stringify({created_at: '2026-01-01T00:00:00Z', id: 'hx-00000001', issue_type: 'task', priority: 2, status: 'open', title: 'print a lot'}) + '\n',
  )
  const agent = path.join(base, 'big-line-agent')
  writeFileSync(
    agent,
    `#!/bin/sh
cat >/dev/null
if [ "$HELIX_ACTION" = implementation ]; then
  head -c ${bytes} /dev/zero | tr '\\0' x
  echo
  helix tracker close "$HELIX_BEAD_ID" >/dev/null
  echo closed
else
  echo "NEXT_ACTION: STOP"
fi
`,
  )
  chmodSync(agent, 0o755)
  return {base, root, agent}
}

function env() {
  const e = {...process.env, NODE_ENV: 'production', HELIX_KILL_GRACE_MS: '500'}
  for (const k of Object.keys(e)) if (k.startsWith('HELIX_') && k !== 'HELIX_KILL_GRACE_MS') delete e[k]
  return e
}

/** wall ms and peak RSS (MB) of `helix run` */
async function measure(bytes) {
  const p = makeProject(bytes)
  const args = [helixBin, 'run', '--no-auto-review', '--max-cycles', '1', '--agent', p.agent]
  try {
    const t0 = process.hrtime.bigint()
    let peakKb = 0
    let code
    if (existsSync('/usr/bin/time')) {
      const r = spawnSync('/usr/bin/time', ['-f', 'HELIX_BENCH_MAXRSS %M', process.execPath, ...args], {cwd: p.root, env: env(), encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 64 * MB})
      code = r.status
      const m = /HELIX_BENCH_MAXRSS (\d+)/.exec(r.stderr)
      if (m) peakKb = Number(m[1])
    } else {
      const child = spawn(process.execPath, args, {cwd: p.root, env: env(), stdio: 'ignore'})
      const poll = setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
          if (m) peakKb = Math.max(peakKb, Number(m[1]))
        } catch {
          /* exited */
        }
      }, 10)
      code = await new Promise((r) => child.once('exit', r))
      clearInterval(poll)
    }
    const ms = Number(process.hrtime.bigint() - t0) / 1e6
    const closed = readFileSync(path.join(p.root, '.ddx', 'beads.jsonl'), 'utf8').includes('"closed"')
    return {ms, rssMb: peakKb / 1024, code, closed}
  } finally {
    rmSync(p.base, {recursive: true, force: true})
  }
}

const base = await measure(16)
const big = await measure(SIZE)
console.log(`baseline (16-byte line): ${base.ms.toFixed(0)} ms, peak RSS ${base.rssMb.toFixed(1)} MB`)
console.log(
  `one ${(SIZE / MB).toFixed(0)} MB line: ${big.ms.toFixed(0)} ms, peak RSS ${big.rssMb.toFixed(1)} MB ` +
    `(goal < ${GOAL_MB} MB: ${big.rssMb < GOAL_MB ? 'met' : 'NOT met'}); exit ${big.code}, bead ${big.closed ? 'closed' : 'NOT closed'}`,
)
process.exit(big.rssMb < GOAL_MB && big.code === 0 && big.closed ? 0 : 1)
