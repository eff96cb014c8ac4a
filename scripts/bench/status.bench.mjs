// `helix status --json` on a temp copy of the real 966-bead helix tracker,
// as a ratio to `node -e 0` (SPEC 11: ≤ 3×; docs/performance.md: ≤ 1.5×). The first run
// builds the parse cache (.helix/cache); the median is of the runs after it, as an
// operator polling status sees it. The cold figure (no cache) is printed beside it.
import {copyFileSync, mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {compareToNode, record, report} from './lib.mjs'
import {REAL_HELIX} from './real-trackers.mjs'

const real = process.env.HELIX_REAL_TRACKER ?? REAL_HELIX
const dir = mkdtempSync(path.join(tmpdir(), 'helix-status-bench-'))
try {
  mkdirSync(path.join(dir, '.ddx'))
  copyFileSync(real, path.join(dir, '.ddx', 'beads.jsonl'))
  const runs = Number(process.env.BENCH_RUNS ?? 11)
  const st = compareToNode(['status', '--json'], {cwd: dir, runs})
  report('helix status --json (966 beads)', st, 1.5)
  record('status', st)
  const cold = compareToNode(['status', '--json'], {cwd: dir, runs, env: {HELIX_NO_PARSE_CACHE: '1'}})
  report('  (same, every run parsing the whole tracker: HELIX_NO_PARSE_CACHE=1)', cold)
  record('status-cold', cold)
  report('helix status (text, 966 beads)', compareToNode(['status'], {cwd: dir, runs}), 3)
  // The same command forced through oclif, for reference: what the fast path saves.
  report('  (same, through oclif: HELIX_NO_FAST_PATH=1)', compareToNode(['status', '--json'], {cwd: dir, runs, env: {HELIX_NO_FAST_PATH: '1'}}))
} finally {
  rmSync(dir, {recursive: true, force: true})
}
