// Prints `N passed, N failed` from a vitest JSON report. Exits 1 when the report
// is missing, when nothing ran, or when anything failed.
import {readFileSync} from 'node:fs'

const file = process.argv[2]
let report
try {
  report = JSON.parse(readFileSync(file, 'utf8'))
} catch (error) {
  console.log(`no test report at ${file}: ${error.message}`)
  console.log('0 passed, 1 failed')
  process.exit(1)
}
const passed = report.numPassedTests ?? 0
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
const suiteErrors = report.numFailedTestSuites ?? 0
const failedCount = (report.numFailedTests ?? 0) + (suiteErrors > 0 && (report.numFailedTests ?? 0) === 0 ? suiteErrors : 0)
console.log(skipped > 0 ? `${passed} passed, ${failedCount} failed, ${skipped} skipped` : `${passed} passed, ${failedCount} failed`)
process.exit(failedCount > 0 || passed === 0 ? 1 : 0)
