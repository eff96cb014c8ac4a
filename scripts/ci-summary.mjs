// Prints `N passed, N failed` from a vitest JSON report, plus any extra checks
// given as `name=exitcode` arguments (each counts as one test). Exits 1 when the
// report is missing, when nothing ran, or when anything failed.
import {readFileSync} from 'node:fs'

const [file, ...extras] = process.argv.slice(2)
let report
try {
  report = JSON.parse(readFileSync(file, 'utf8'))
} catch (error) {
  console.log(`no test report at ${file}: ${error.message}`)
  console.log('0 passed, 1 failed')
  process.exit(1)
}
let passed = report.numPassedTests ?? 0
let failed = report.numFailedTests ?? 0
// a test file that failed to load has no failed tests of its own: count it once
if (failed === 0 && (report.numFailedTestSuites ?? 0) > 0) failed = report.numFailedTestSuites
for (const extra of extras) {
  const [name, code] = extra.split('=')
  if (code === '0') passed++
  else {
    failed++
    console.log(`failed: ${name} (exit ${code})`)
  }
}
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
console.log(skipped > 0 ? `${passed} passed, ${failed} failed, ${skipped} skipped` : `${passed} passed, ${failed} failed`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
