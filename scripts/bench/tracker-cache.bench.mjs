// The tracker read cache and the write protocol's cost, in process:
// a 10,000-bead tracker read cold (parse) vs. warm (one stat, identity unchanged),
// and one locked one-bead mutation (lock, read, change, byte-preserving write,
// identity check, rename). `npm run build` first.
import {mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {clearTrackerCache, readTracker} from '../../dist/tracker/store.js'
import {updateBead} from '../../dist/tracker/ops.js'
import {projectPaths} from '../../dist/util/root.js'

const N = 10_000
const dir = mkdtempSync(path.join(tmpdir(), 'helix-bench-cache-'))
try {
  mkdirSync(path.join(dir, '.ddx'))
  const lines = []
  for (let i = 0; i < N; i++) {
    const id = `hx-${i.toString(16).padStart(8, '0')}`
    lines.push(JSON.stringify({acceptance: `1. Tests for part ${i} pass.`, created_at: '2026-01-01T00:00:00Z', description: `Context for bead ${i}. `.repeat(8), id, issue_type: 'task', labels: ['helix', 'phase:build'], priority: i % 5, schema_version: 1, status: i % 3 ? 'open' : 'closed', title: `Part ${i}`, updated_at: '2026-01-01T00:00:00Z'}))
  }
  const paths = projectPaths(dir, {})
  writeFileSync(paths.file, lines.join('\n') + '\n')
  const mb = statSync(paths.file).size / 1e6
  const time = async (fn, runs) => {
    const ms = []
    for (let i = 0; i < runs; i++) {
      const t0 = process.hrtime.bigint()
      await fn()
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6)
    }
    ms.sort((a, b) => a - b)
    return ms[Math.floor(ms.length / 2)]
  }
  const cold = await time(async () => {
    clearTrackerCache()
    await readTracker(paths.file)
  }, 7)
  await readTracker(paths.file)
  const warm = await time(() => readTracker(paths.file), 50)
  const write = await time(() => updateBead(paths, 'hx-00000001', {title: `t ${Math.random()}`}), 5)
  console.log(`tracker read, ${N} beads (${mb.toFixed(1)} MB): cold parse ${cold.toFixed(1)} ms, unchanged (stat only, cached parse) ${(warm * 1000).toFixed(0)} µs, ratio ${(cold / warm).toFixed(0)}x`)
  console.log(`one-bead mutation (lock + read + write + identity check + rename + fsync): ${write.toFixed(1)} ms median`)
} finally {
  rmSync(dir, {recursive: true, force: true})
}
