/**
 * `.helix-logs/runs.jsonl` (SPEC 16.5): one JSON line per stopped run, appended
 * with O_APPEND in one write so concurrent appenders never interleave a line.
 * `helix report` reads it.
 */
import {closeSync, mkdirSync, openSync, writeSync} from 'node:fs'
import path from 'node:path'
import type {RunHistoryRecord} from './types.js'

export const RUNS_FILE = 'runs.jsonl'

export function runsFile(logDir: string): string {
  return path.join(logDir, RUNS_FILE)
}

export function appendRunHistory(logDir: string, record: RunHistoryRecord): string {
  mkdirSync(logDir, {recursive: true})
  const file = runsFile(logDir)
  const fd = openSync(file, 'a', 0o644)
  try {
    writeSync(fd, Buffer.from(JSON.stringify(record) + '\n', 'utf8'))
  } finally {
    closeSync(fd)
  }
  return file
}
