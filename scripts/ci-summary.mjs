// Prints one `N passed, N failed` line summing every vitest JSON report given (`*.json`)
// plus any extra checks given as `name=exitcode` (each counts as one test). Exits 1 when a
// report is missing, when nothing ran, or when anything failed.
import {readFileSync} from 'node:fs'

let passed = 0
let failed = 0
let skipped = 0
for (const arg of process.argv.slice(2)) {
  const eq = arg.lastIndexOf('=')
  if (!arg.endsWith('.json') && eq > 0) {
    const name = arg.slice(0, eq)
    const code = arg.slice(eq + 1)
    if (code === '0') passed++
    else {
      failed++
      console.log(`failed: ${name} (exit ${code})`)
    }
    continue
  }
  let report
  try {
    report = JSON.parse(readFileSync(arg, 'utf8'))
  } catch (error) {
    console.log(`no test report at ${arg}: ${error instanceof Error ? error.message : String(error)}`)
    failed++
    continue
  }
  passed += report.numPassedTests ?? 0
  let f = report.numFailedTests ?? 0
  // a test file that failed to load has no failed tests of its own: count it once
  if (f === 0 && (report.numFailedTestSuites ?? 0) > 0) f = report.numFailedTestSuites
  failed += f
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
}
console.log(skipped > 0 ? `${passed} passed, ${failed} failed, ${skipped} skipped` : `${passed} passed, ${failed} failed`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
