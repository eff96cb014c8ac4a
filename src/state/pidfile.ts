import {closeSync, openSync, readFileSync, unlinkSync, writeSync, mkdirSync} from 'node:fs'
import path from 'node:path'
import {pidMatchesRecord} from './pid-identity.js'

/** `.ddx/helix.pid`: `<pid> <ISO-8601 UTC start>\n` (SPEC 1, 5.1). */
export interface PidRecord {
  pid: number
  started: string
}

export function readPidFile(file: string): PidRecord | null {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return null
  }
  const [pidText, started = ''] = text.trim().split(/\s+/, 2)
  const pid = Number(pidText)
  if (!Number.isSafeInteger(pid) || pid <= 0) return {pid: 0, started}
  return {pid, started}
}

/** true when `pid` exists and is not a zombie. */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    // no /proc (not Linux): trust kill(0)
    return true
  }
}

/**
 * true when the pid file names a live helix run: the pid is running (not a
 * zombie) and is the process that wrote the file, not an unrelated process
 * that reused the pid after a reboot (see pid-identity.ts).
 */
export function runHolderAlive(record: PidRecord): boolean {
  return record.pid > 0 && pidAlive(record.pid) && pidMatchesRecord(record.pid, record.started)
}

export type AcquireResult = {ok: true; record: PidRecord} | {ok: false; holder: PidRecord}

/**
 * Take the run mutex: create the pid file with O_EXCL. A file whose pid is dead,
 * reused by another process, or unreadable is replaced; a live holder is reported back, file untouched.
 */
export function acquirePidFile(file: string, pid: number = process.pid, now: Date = new Date()): AcquireResult {
  mkdirSync(path.dirname(file), {recursive: true})
  const record: PidRecord = {pid, started: now.toISOString()}
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o644)
      try {
        writeSync(fd, `${record.pid} ${record.started}\n`)
      } finally {
        closeSync(fd)
      }
      return {ok: true, record}
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const holder = readPidFile(file)
    if (holder && runHolderAlive(holder)) return {ok: false, holder}
    try {
      unlinkSync(file)
    } catch {
      // another process replaced it first; loop and try again
    }
  }
  const holder = readPidFile(file) ?? {pid: 0, started: ''}
  return {ok: false, holder}
}

/** Remove the pid file if it still names `pid`. */
export function releasePidFile(file: string, pid: number = process.pid): void {
  const current = readPidFile(file)
  if (current && current.pid !== pid) return
  try {
    unlinkSync(file)
  } catch {
    // already gone
  }
}
