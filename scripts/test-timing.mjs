// Prints how long the test suite took against the machine's speed, and where the time went:
//   node scripts/test-timing.mjs <vitest.json> <npm test wall s> <node -e 0 median ms> [<the same without NODE_EXTRA_CA_CERTS>]
// → `npm test wall 118.2 s = 1,421× node -e 0 (83.2 ms, median of 9) — goal ≤ 1,500×`
//   (and, given the fourth argument, the ratio against that start as well: the suite's
//   own processes start without NODE_EXTRA_CA_CERTS, see vitest.config.ts)
//   then the 5 slowest test files and the 5 slowest tests (a single `it` should stay under 15 s).
import {readFileSync} from 'node:fs'
import path from 'node:path'

const [report, wallArg, nodeArg, bareArg] = process.argv.slice(2)
const wall = Number(wallArg)
const nodeMs = Number(nodeArg)
/** npm test's wall time as a multiple of a start of `ms`, formatted ('?' when either is missing) */
const ratio = (ms) => (wall > 0 && ms > 0 ? Math.round((wall * 1000) / ms).toLocaleString('en-US') : '?')
console.log(`npm test wall ${wall.toFixed(1)} s = ${ratio(nodeMs)}× node -e 0 (${nodeMs.toFixed(1)} ms, median of 9) — goal ≤ 1,500×`)
if (bareArg !== undefined) {
  const bare = Number(bareArg)
  console.log(`  against node -e 0 without NODE_EXTRA_CA_CERTS (${bare.toFixed(1)} ms, as the suite starts its own processes): ${ratio(bare)}×`)
}
try {
  const r = JSON.parse(readFileSync(report, 'utf8'))
  const files = (r.testResults ?? []).map((f) => ({name: path.relative(process.cwd(), f.name), s: (f.endTime - f.startTime) / 1000}))
  files.sort((a, b) => b.s - a.s)
  console.log('slowest test files:')
  for (const f of files.slice(0, 5)) console.log(`  ${f.s.toFixed(1).padStart(6)} s  ${f.name}`)
  const tests = (r.testResults ?? []).flatMap((f) => (f.assertionResults ?? []).map((a) => ({name: `${path.relative(process.cwd(), f.name)} > ${a.title}`, s: (a.duration ?? 0) / 1000})))
  tests.sort((a, b) => b.s - a.s)
  console.log('slowest tests:')
  for (const t of tests.slice(0, 5)) console.log(`  ${t.s.toFixed(1).padStart(6)} s  ${t.name}`)
} catch (error) {
  console.log(`no per-file timings: ${error instanceof Error ? error.message : String(error)}`)
}
