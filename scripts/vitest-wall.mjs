// Prints the wall time vitest spent on a JSON report's test files (first start → last end).
import {readFileSync} from 'node:fs'

try {
  const r = JSON.parse(readFileSync(process.argv[2], 'utf8'))
  const files = r.testResults ?? []
  if (files.length === 0) throw new Error('no test files in the report')
  const start = Math.min(r.startTime ?? Infinity, ...files.map((t) => t.startTime))
  const end = Math.max(...files.map((t) => t.endTime))
  console.log(((end - start) / 1000).toFixed(1))
} catch {
  console.log('?')
}
