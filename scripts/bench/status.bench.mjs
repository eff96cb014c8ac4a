// `helix status --json` on a temp copy of the real 966-bead helix tracker,
// as a ratio to `node -e 0` (SPEC 11: goal ≤ 3×, stretch 2×).
import {copyFileSync, mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {compareToNode, report} from './lib.mjs'
import {REAL_HELIX} from './real-trackers.mjs'

const real = process.env.HELIX_REAL_TRACKER ?? REAL_HELIX
const dir = mkdtempSync(path.join(tmpdir(), 'helix-status-bench-'))
try {
  mkdirSync(path.join(dir, '.ddx'))
  copyFileSync(real, path.join(dir, '.ddx', 'beads.jsonl'))
  const runs = Number(process.env.BENCH_RUNS ?? 11)
  report('helix status --json (966 beads)', compareToNode(['status', '--json'], {cwd: dir, runs}), 3)
  report('helix status (text, 966 beads)', compareToNode(['status'], {cwd: dir, runs}), 3)


  // The same command forced through oclif, for reference: what the fast path saves.
  report('  (same, through oclif: HELIX_NO_FAST_PATH=1)', compareToNode(['status', '--json'], {cwd: dir, runs, env: {HELIX_NO_FAST_PATH: '1'}}))
} finally {
  rmSync(dir, {recursive: true, force: true})
}
