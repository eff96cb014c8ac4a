// `helix status --json` on a temp copy of the real 966-bead helix tracker,
// as a ratio to `node -e 0` (SPEC 11: goal ≤ 3×, stretch 2×).
import {copyFileSync, mkdirSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {compareToNode, report, repoRoot} from './lib.mjs'

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
} finally {
  rmSync(dir, {recursive: true, force: true})
}
