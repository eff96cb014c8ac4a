/**
 * The tracker store (SPEC 2.2): lock-free reads, and locked read-modify-write
 * mutations with an atomic, fsynced replace of `beads.jsonl`.
 *
 * Lock: proper-lockfile on the directory `<dir>/beads.lock` (the path DDx's own
 * writer uses). A lock left behind by a killed writer is considered stale once
 * its mtime is older than LOCK_STALE_MS; the holder refreshes the mtime every
 * LOCK_UPDATE_MS. So a `kill -9` mid-write blocks other writers for at most
 * about LOCK_STALE_MS + one retry interval (≈ 2.2 s).
 */
import {promises as fsp, readFileSync} from 'node:fs'
import path from 'node:path'
import {HelixError, EXIT} from '../util/errors.js'
import {pidAlive} from '../state/pidfile.js'
import type {ProjectPaths} from '../util/root.js'
import type {Bead, TrackerSnapshot} from './types.js'
import {parseTracker, rejectedFileName, serializeTracker, supersededDuplicateLines} from './codec.js'

export const LOCK_STALE_MS = 2000
export const LOCK_UPDATE_MS = 500
const RETRY_MIN_MS = 25
const RETRY_MAX_MS = 120
export const DEFAULT_LOCK_TIMEOUT_SEC = 10

/** Read and parse the tracker. A missing file is an empty tracker. No lock. */
export async function readTracker(file: string): Promise<TrackerSnapshot> {
  let text: string
  try {
    // One synchronous read: measurably faster than the chunked async read for
    // multi-MB trackers, and readers never wait on anything else meanwhile.
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {beads: [], byId: new Map(), duplicateIds: []}
    throw new HelixError(`cannot read ${file}: ${(error as Error).message}`, EXIT.ERROR)
  }
  return parseTracker(text, file)
}

/** Raw text of the tracker ('' when missing). */
export async function readTrackerText(file: string): Promise<string> {
  try {
    return await fsp.readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw new HelixError(`cannot read ${file}: ${(error as Error).message}`, EXIT.ERROR)
  }
}

export function lockTimeoutSec(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HELIX_LOCK_TIMEOUT
  if (raw === undefined || raw.trim() === '') return DEFAULT_LOCK_TIMEOUT_SEC
  const n = Number(raw)
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_LOCK_TIMEOUT_SEC
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const yieldToTimers = () => new Promise((r) => setTimeout(r, 0))

interface HeldLock {
  release(): Promise<void>
  compromised(): boolean
}

/**
 * Take the writer lock, retrying until `timeoutSec` elapses.
 * Exposed for tests and for doctor's repair path.
 */
export async function acquireTrackerLock(paths: Pick<ProjectPaths, 'dir' | 'file' | 'lockDir'>, timeoutSec: number): Promise<HeldLock> {
  const lockfile = (await import('proper-lockfile')).default
  await fsp.mkdir(paths.dir, {recursive: true})
  let lost = false
  const deadline = Date.now() + timeoutSec * 1000
  for (;;) {
    try {
      const release = await lockfile.lock(paths.file, {
        lockfilePath: paths.lockDir,
        realpath: false,
        stale: LOCK_STALE_MS,
        update: LOCK_UPDATE_MS,
        retries: 0,
        onCompromised: () => {
          lost = true
        },
      })
      return {
        release: async () => {
          try {
            await release()
          } catch {
            // already released or compromised: nothing more to do
          }
        },
        compromised: () => lost,
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      // ENOTEMPTY: the lock directory is old enough to look stale but holds
      // files, i.e. it is DDx's lock (pid/acquired_at inside). proper-lockfile
      // cannot rmdir it. Break it only when the DDx writer it names is dead;
      // otherwise treat it as held and keep waiting.
      if (code === 'ENOTEMPTY' && (await breakDeadDdxLock(paths.lockDir))) continue
      if (code !== 'ELOCKED' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw new HelixError(`cannot lock ${paths.lockDir}: ${(error as Error).message}`, EXIT.ERROR)
      if (Date.now() >= deadline) {
        throw new HelixError(`tracker is locked by another writer (waited ${formatSec(timeoutSec)}s)`, EXIT.BUSY)
      }
      const wait = RETRY_MIN_MS + Math.floor(Math.random() * (RETRY_MAX_MS - RETRY_MIN_MS))
      await sleep(Math.max(1, Math.min(wait, deadline - Date.now())))
    }
  }
}

function formatSec(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1)
}

/**
 * Atomically replace `file` with `text`: temp file in the same directory,
 * fsync, rename, fsync the directory.
 */
export async function writeFileDurable(file: string, text: string): Promise<void> {
  const dir = path.dirname(file)
  const tmp = path.join(dir, `.${path.basename(file)}.tmp-${process.pid}-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`)
  let mode = 0o644
  try {
    mode = (await fsp.stat(file)).mode & 0o7777 // keep the tracker's permissions
  } catch {
    // new file
  }
  const fh = await fsp.open(tmp, 'wx', mode)
  try {
    if (mode !== 0o644) await fh.chmod(mode) // open's mode is filtered by the umask
    await fh.writeFile(text, 'utf8')
    await fh.sync()
  } catch (error) {
    await fh.close().catch(() => {})
    await fsp.rm(tmp, {force: true})
    throw error
  }
  await fh.close()
  try {
    await fsp.rename(tmp, file)
  } catch (error) {
    await fsp.rm(tmp, {force: true})
    throw error
  }
  try {
    const dh = await fsp.open(dir, 'r')
    try {
      await dh.sync()
    } finally {
      await dh.close()
    }
  } catch {
    // some filesystems refuse fsync on a directory; the rename already happened
  }
}

/** Append `text` to `file` (created if missing) and fsync it. */
export async function appendFileDurable(file: string, text: string): Promise<void> {
  const fh = await fsp.open(file, 'a', 0o644)
  try {
    await fh.writeFile(text, 'utf8')
    await fh.sync()
  } finally {
    await fh.close()
  }
}

export interface MutationOutcome<T> {
  /** the new full bead list to write, or null to leave the file untouched */
  beads: Bead[] | null
  result: T
}

/**
 * Locked read-modify-write. `fn` gets a fresh snapshot read under the lock and
 * returns the beads to write (null = no write) and a result. Unchanged beads
 * re-serialize byte-identically, so a one-bead change touches one line.
 * `fn` may be async, but must not do anything slow (never an agent call).
 */
export async function mutateTracker<T>(
  paths: ProjectPaths,
  fn: (snap: TrackerSnapshot) => MutationOutcome<T> | Promise<MutationOutcome<T>>,
  opts: {timeoutSec?: number; onWarning?: (line: string) => void} = {},
): Promise<T> {
  const timeoutSec = opts.timeoutSec ?? lockTimeoutSec()
  const lock = await acquireTrackerLock(paths, timeoutSec)
  try {
    const original = await readTrackerText(paths.file)
    const snap = parseTracker(original, paths.file)
    await yieldToTimers()
    const {beads, result} = await fn(snap)
    if (beads !== null) {
      await yieldToTimers()
      const text = serializeTracker(beads)
      // Let proper-lockfile's mtime refresh run (and report a compromise) between
      // the long synchronous steps of a very large tracker.
      await yieldToTimers()
      if (lock.compromised()) {
        throw new HelixError('tracker lock was lost before writing (another writer broke it); nothing written', EXIT.BUSY)
      }
      // Duplicate ids: the rewrite keeps the last copy (DDx rule); the earlier
      // copies are saved verbatim next to the tracker, never dropped silently.
      const losers = supersededDuplicateLines(original, snap)
      if (losers.length) {
        const rejected = rejectedFileName(paths.file)
        await appendFileDurable(rejected, losers.map((l) => l.text + '\n').join(''))
        const warn = opts.onWarning ?? ((line: string) => process.stderr.write(line + '\n'))
        warn(`helix: warning: duplicate id(s) ${snap.duplicateIds.join(', ')}: kept the last line of each; saved ${losers.length} earlier line(s) to ${rejected}`)
      }
      await writeFileDurable(paths.file, text)
    }
    return result
  } finally {
    await lock.release()
  }
}

export interface LockInfo {
  path: string
  age_seconds: number
  /** pid recorded by DDx's writer inside the lock directory, when present */
  ddx_pid: number | null
}

/**
 * A DDx writer's lock directory (`pid` and `acquired_at` inside) left behind by a
 * `ddx` process that died: without this, every helix write would time out until
 * someone removed it by hand, and an overnight run would stop. It is broken only
 * when all of these hold: it is older than the stale window, it names a pid,
 * and that pid is not running (zombies count as dead). A directory without a
 * readable pid (DDx between its mkdir and writing the pid) is never broken.
 * It is first renamed aside (atomic: of two helix writers only one wins), then
 * removed. Returns true when it was broken.
 */
export async function breakDeadDdxLock(lockDir: string, isRunning: (pid: number) => boolean = pidAlive): Promise<boolean> {
  let mtimeMs: number
  try {
    mtimeMs = (await fsp.stat(lockDir)).mtimeMs
  } catch {
    return false
  }
  if (Date.now() - mtimeMs < LOCK_STALE_MS) return false
  const info = await inspectLock(lockDir)
  if (!info || info.ddx_pid === null || isRunning(info.ddx_pid)) return false
  const aside = `${lockDir}.dead-${info.ddx_pid}-${process.pid}-${Date.now().toString(36)}`
  try {
    await fsp.rename(lockDir, aside)
  } catch {
    return false // someone else moved or released it first
  }
  await fsp.rm(aside, {recursive: true, force: true})
  return true
}

/** What sits at `<dir>/beads.lock` right now (null when no lock is held). */
export async function inspectLock(lockDir: string, now: Date = new Date()): Promise<LockInfo | null> {
  try {
    const st = await fsp.stat(lockDir)
    let pid: number | null = null
    try {
      const raw = (await fsp.readFile(path.join(lockDir, 'pid'), 'utf8')).trim()
      if (/^\d+$/.test(raw)) pid = Number(raw)
    } catch {
      // proper-lockfile's own lock directories are empty
    }
    return {path: lockDir, age_seconds: Math.max(0, Math.floor((now.getTime() - st.mtimeMs) / 1000)), ddx_pid: pid}
  } catch {
    return null
  }
}
