/** Blocker report `.helix-logs/blockers-YYYYMMDD-HHMMSS.md` (SPEC 5.10). */
import {closeSync, openSync, writeSync} from 'node:fs'
import {makeDirSync} from '../util/files.js'
import path from 'node:path'
import type {BlockerEntry} from '../loop/ports.js'
import {fileStamp} from '../util/time.js'


/** Tracker text is data: a title with line breaks must not add headings or bullets to the report. */
function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  return String(text ?? '').replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ').trim()
}

export function renderBlockerReport(a: {now: Date; attempted: number; completed: number; logPath: string | null; entries: BlockerEntry[]}): string {
  const out = [
    '# HELIX Run Blocker Report',
    '',
    `Generated: ${a.now.toISOString()}`,
    `Cycles: ${a.attempted} attempted, ${a.completed} completed`,
    `Log: ${a.logPath ?? '(none)'}`,
    '',
    '## Blocked Issues',
    '',
  ]
  for (const e of a.entries) {
    out.push(`### ${oneLine(e.id)}`, '', `- Title: ${oneLine(e.title)}`, `- Reason: ${oneLine(e.reason)}`, `- Attempts: ${e.attempts}`, '')
  }
  return out.join('\n')
}

/** Writes the report under a fresh name (never overwrites an earlier report); returns the path. */
export function writeBlockerReport(logDir: string, a: Parameters<typeof renderBlockerReport>[0]): string {
  makeDirSync(logDir)
  const text = renderBlockerReport(a)
  for (let i = 0; i < 1000; i++) {
    const file = path.join(logDir, `blockers-${fileStamp(a.now)}${i === 0 ? '' : `-${i}`}.md`)
    let fd: number
    try {
      fd = openSync(file, 'wx', 0o644)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue
      throw error
    }
    try {
      writeSync(fd, text)
    } finally {
      closeSync(fd)
    }
    return file
  }
  throw new Error(`cannot create a blocker report in ${logDir}`)
}
