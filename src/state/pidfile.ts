import {constants as FS, fstatSync, closeSync, linkSync, mkdirSync, openSync, readFileSync, rmdirSync, statSync, unlinkSync, writeFileSync, writeSync} from 'node:fs'
import path from 'node:path'
import {pidAlive} from '../proc/process.js'
import {pidMatchesRecord} from '../proc/pid-identity.js'
import {HelixError, errorMessage, EXIT} from '../util/errors.js'

/** `.ddx/helix.pid`: `<pid> <ISO-8601 UTC start>\n` (SPEC 1, 5.1). */
export interface PidRecord {
  pid: number
  started: string
}

export function readPidFile(file: string): PidRecord | null {
  let text: string
  let fd: number
  try {
    // never block on a FIFO planted at the pid file's path
    fd = openSync(file, FS.O_RDONLY | FS.O_NONBLOCK | FS.O_NOCTTY)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    throw new HelixError(`cannot read ${file}: ${errorMessage(error)}`, EXIT.ERROR)
  }
  try {
    if (!fstatSync(fd).isFile()) throw new HelixError(`${file} is not a regular file`, EXIT.ERROR)
    text = readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
  const [pidText, started = ''] = text.trim().split(/\s+/, 2)
  const pid = Number(pidText)
  if (!Number.isSafeInteger(pid) || pid <= 0) return {pid: 0, started}
  return {pid, started}
}

/** lives in proc/process.ts (one home per utility); re-exported so existing imports keep working */
// re-exported only for src/tracker/store.ts (being changed on another branch); import it from proc/process.js
export {pidAlive}

/**
 * true when the pid file names a live helix run: the pid is running (not a
 * zombie) and is the process that wrote the file, not an unrelated process
 * that reused the pid after a reboot (see pid-identity.ts).
 */
export function runHolderAlive(record: PidRecord): boolean {
  // pidMatchesRecord refuses a missing, unparsable or future start field first
  return record.pid > 0 && pidMatchesRecord(record.pid, record.started) && pidAlive(record.pid)
}

export type AcquireResult = {ok: true; record: PidRecord} | {ok: false; holder: PidRecord}

const GUARD_STALE_MS = 10_000
const GUARD_WAIT_MS = 3_000

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

/**
 * Run `fn` holding `<file>.lock` (a directory, created atomically). It makes
 * "re-read the pid file, then remove it" one step with respect to every other
 * remover: without it two runs starting over the same dead file could each
 * judge it dead, and the slower one would delete the faster one's fresh mutex
 * and create its own — two runs at once. The guard is held for microseconds;
 * one left by a crash is broken after GUARD_STALE_MS. Returns false when the
 * guard could not be taken.
 */
function withPidGuard(file: string, fn: () => void): boolean {
  const guard = `${file}.lock`
  const deadline = Date.now() + GUARD_WAIT_MS
  for (;;) {
    try {
      mkdirSync(guard)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      try {
        if (Date.now() - statSync(guard).mtimeMs > GUARD_STALE_MS) rmdirSync(guard)
      } catch {
        // gone already, or not ours to break: retry
      }
      if (Date.now() > deadline) return false
      sleepSync(5 + Math.floor(Math.random() * 20))
    }
  }
  try {
    fn()
  } finally {
    try {
      rmdirSync(guard)
    } catch {
      // broken as stale by someone else
    }
  }
  return true
}

function sameRecord(a: PidRecord | null, b: PidRecord | null): boolean {
  return a !== null && b !== null && a.pid === b.pid && a.started === b.started
}

/**
 * Remove the pid file only if it still holds `expected` (checked and removed
 * under the guard, so a file a new run wrote meanwhile is never removed).
 * Returns true when it removed the file.
 */
export function removePidFileIf(file: string, expected: PidRecord): boolean {
  let removed = false
  withPidGuard(file, () => {
    if (!sameRecord(readPidFile(file), expected)) return
    try {
      unlinkSync(file)
      removed = true
    } catch {
      // already gone
    }
  })
  return removed
}

/**
 * Create `file` holding `record`, failing with EEXIST when it exists: a hard
 * link of the prepared temp file, or — on a filesystem without hard links —
 * an O_EXCL create followed by the write.
 */
function createWithContent(tmp: string, file: string, record: PidRecord): void {
  try {
    linkSync(tmp, file)
    return
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST' || !['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV', 'EMLINK'].includes(code ?? '')) throw error
  }
  const fd = openSync(file, 'wx', 0o644)
  try {
    writeSync(fd, `${record.pid} ${record.started}\n`)
  } finally {
    closeSync(fd)
  }
}

export interface AcquireHooks {
  /** test seam: called after a holder was judged dead, before it is removed */
  beforeReplace?: (dead: PidRecord) => void
}

/**
 * Take the run mutex. The record is written to a private temp file and
 * hard-linked to `file`: like O_EXCL the link fails when the file exists, and
 * unlike open-then-write the file never exists empty. A file whose pid is dead,
 * reused by another process, or unreadable is replaced (only that very file:
 * see removePidFileIf); a live holder is reported back, file untouched.
 */
export function acquirePidFile(file: string, pid: number = process.pid, now: Date = new Date(), hooks: AcquireHooks = {}): AcquireResult {
  mkdirSync(path.dirname(file), {recursive: true})
  const record: PidRecord = {pid, started: now.toISOString()}
  const tmp = `${file}.${pid}-${Math.random().toString(36).slice(2, 10)}.tmp`
  writeFileSync(tmp, `${record.pid} ${record.started}\n`, {mode: 0o644, flag: 'wx'})
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        createWithContent(tmp, file, record)
        return {ok: true, record}
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const holder = readPidFile(file)
      if (!holder) continue // removed meanwhile: try again
      if (runHolderAlive(holder)) return {ok: false, holder}
      hooks.beforeReplace?.(holder)
      removePidFileIf(file, holder)
    }
  } finally {
    try {
      unlinkSync(tmp)
    } catch {
      // already gone
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
