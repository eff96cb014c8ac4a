/**
 * The writer lock (SPEC 2.2, 13.1): proper-lockfile on the directory
 * `<dir>/beads.lock` (the path DDx's own writer uses). The holder refreshes its
 * mtime every LOCK_UPDATE_MS; another writer breaks it once it is older than
 * LOCK_STALE_MS (or more than LOCK_STALE_MS in the future: the clock stepped,
 * or someone touched it), and breaks a DDx lock whose pid is junk, dead or reused.
 */
import {promises as fsp} from 'node:fs'
import path from 'node:path'
import {HelixError, EXIT} from '../util/errors.js'
import {pidAlive} from '../state/pidfile.js'
import {processStartMs} from '../proc/pid-identity.js'
import type {ProjectPaths} from '../util/root.js'

export const LOCK_STALE_MS = 10_000
export const LOCK_UPDATE_MS = 2_000
const RETRY_MIN_MS = 25
const RETRY_MAX_MS = 120
export const DEFAULT_LOCK_TIMEOUT_SEC = 10
/**
 * How long a write that must not be given up lightly waits for the lock (the reopen of
 * a bead whose attempt did not land): past the stale window, so a writer that died
 * holding the lock (an agent killed mid-write) is outlasted and its lock broken,
 * instead of the write being owed to the next run. A live writer refreshes its lock
 * every LOCK_UPDATE_MS and still makes the wait fail.
 */
export const OUTLAST_STALE_LOCK_SEC = LOCK_STALE_MS / 1000 + 2

export function lockTimeoutSec(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HELIX_LOCK_TIMEOUT
  if (raw === undefined || raw.trim() === '') return DEFAULT_LOCK_TIMEOUT_SEC
  const n = Number(raw)
  return Number.isFinite(n) && n >= 0 ? n : DEFAULT_LOCK_TIMEOUT_SEC
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface HeldLock {
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
          } catch (error) {
            // A compromised or already-released lock cannot be released again
            // (proper-lockfile: ERELEASED / ECOMPROMISED); the write path has
            // already refused to rename in that case, so there is nothing to undo.
            const code = (error as NodeJS.ErrnoException).code
            if (code !== 'ERELEASED' && code !== 'ECOMPROMISED' && code !== 'ENOENT') throw error
          }
        },
        compromised: () => lost,
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ELOCKED' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw new HelixError(`cannot lock ${paths.lockDir}: ${(error as Error).message}`, EXIT.ERROR)
      // proper-lockfile breaks only locks older than `stale`; it never breaks a
      // lock from the future (clock step), nor a DDx lock (files inside: it
      // cannot rmdir it). Those two are judged here (SPEC 13.1).
      if (await breakStaleLock(paths.lockDir)) continue
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

/** true when our lock directory still exists and was refreshed within the stale window (nobody may have broken it). */
export async function lockStillHeld(lock: HeldLock, lockDir: string): Promise<boolean> {
  if (lock.compromised()) return false
  try {
    const age = Date.now() - (await fsp.stat(lockDir)).mtimeMs
    return age < LOCK_STALE_MS && age > -LOCK_STALE_MS
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}


export interface LockInfo {
  path: string
  age_seconds: number
  /** pid recorded by DDx's writer inside the lock directory, when present */
  ddx_pid: number | null
  /** who holds it: 'helix' (proper-lockfile: an empty directory) or 'ddx' (pid/acquired_at inside) */
  owner?: 'helix' | 'ddx'
  /** the mtime is more than the stale window in the future */
  future?: boolean
  /** the next writer would break it (SPEC 13.1) */
  stale?: boolean
  /** why it is stale, or why not */
  why?: string
}

/**
 * Is a lock directory stale (SPEC 13.1)? Any lock whose mtime is more than the
 * window in the future is. Otherwise it must be older than the window, and:
 * a helix lock (empty directory) is then stale; a DDx lock is stale when its
 * `pid` is empty or junk, names a dead process, or one that started after the
 * lock's `acquired_at` (a reused pid).
 */
function judgeLock(info: {ageMs: number; owner: 'helix' | 'ddx'; pidRaw: string | null; acquiredAt: string | null}, isRunning: (pid: number) => boolean): {stale: boolean; future: boolean; why: string; pid: number | null} {
  const pid = info.pidRaw !== null && /^\d+$/.test(info.pidRaw) && Number(info.pidRaw) > 0 ? Number(info.pidRaw) : null
  if (info.ageMs < -LOCK_STALE_MS) return {stale: true, future: true, why: 'mtime in the future', pid}
  const old = info.ageMs >= LOCK_STALE_MS
  if (info.owner === 'helix') return {stale: old, future: false, why: old ? 'not refreshed within the stale window' : 'held by a helix writer', pid}
  if (pid === null) return {stale: old, future: false, why: old ? 'DDx lock with an empty or unreadable pid' : 'DDx lock being written', pid}
  if (!isRunning(pid)) return {stale: old, future: false, why: old ? `DDx writer pid ${pid} is not running` : `DDx writer pid ${pid}`, pid}
  if (info.acquiredAt !== null && startedAfter(pid, info.acquiredAt)) {
    return {stale: old, future: false, why: old ? `pid ${pid} was reused by another process` : `DDx writer pid ${pid}`, pid}
  }
  return {stale: false, future: false, why: `held by DDx writer pid ${pid}`, pid}
}

/** true when `pid` provably started after the time `iso` (plus 30 s slack): it cannot be the writer that took the lock then. */
function startedAfter(pid: number, iso: string): boolean {
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return false
  const start = processStartMs(pid)
  return start !== null && start > t + 30_000
}

async function readSmall(file: string): Promise<string | null> {
  try {
    return (await fsp.readFile(file, 'utf8')).trim()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'EISDIR') return null
    throw error
  }
}

/**
 * Break a lock directory that is stale by the rules proper-lockfile does not
 * apply itself (future mtime; DDx lock with junk/dead/reused pid). It is first
 * renamed aside (atomic: of two helix writers only one wins), then removed.
 * Returns true when it was broken.
 */
export async function breakStaleLock(lockDir: string, isRunning: (pid: number) => boolean = pidAlive): Promise<boolean> {
  const info = await inspectLock(lockDir, new Date(), isRunning)
  if (!info || !info.stale) return false
  const aside = `${lockDir}.dead-${info.ddx_pid ?? 'x'}-${process.pid}-${Date.now().toString(36)}`
  try {
    await fsp.rename(lockDir, aside)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return true // someone else released or broke it first: try again
    throw new HelixError(`cannot break stale lock ${lockDir}: ${(error as Error).message}`, EXIT.ERROR)
  }
  await fsp.rm(aside, {recursive: true, force: true})
  return true
}

/** Old name, kept for callers: a DDx lock is one of the cases breakStaleLock handles. */
/** What sits at `<dir>/beads.lock` right now (null when no lock is held). Errors other than "missing" are surfaced. */
export async function inspectLock(lockDir: string, now: Date = new Date(), isRunning: (pid: number) => boolean = pidAlive): Promise<LockInfo | null> {
  let st
  try {
    st = await fsp.stat(lockDir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new HelixError(`cannot inspect lock ${lockDir}: ${(error as Error).message}`, EXIT.ERROR)
  }
  let entries: string[] = []
  try {
    if (st.isDirectory()) entries = await fsp.readdir(lockDir)
  } catch (error) {
    // released between the stat and here: no lock held
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new HelixError(`cannot inspect lock ${lockDir}: ${(error as Error).message}`, EXIT.ERROR)
  }
  const owner = entries.length === 0 ? 'helix' : 'ddx'
  const pidRaw = owner === 'ddx' ? ((await readSmall(path.join(lockDir, 'pid'))) ?? '') : null
  const acquiredAt = owner === 'ddx' ? await readSmall(path.join(lockDir, 'acquired_at')) : null
  const ageMs = now.getTime() - st.mtimeMs
  const j = judgeLock({ageMs, owner, pidRaw, acquiredAt}, isRunning)
  return {path: lockDir, age_seconds: Math.floor(ageMs / 1000), ddx_pid: j.pid, owner, future: j.future, stale: j.stale, why: j.why}
}
