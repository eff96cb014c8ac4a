/**
 * The tracker store (SPEC 2.2, 13.1, 13.2): lock-free reads, and locked
 * read-modify-write mutations with an atomic, fsynced replace of `beads.jsonl`.
 *
 * Lock: proper-lockfile on the directory `<dir>/beads.lock` (the path DDx's own
 * writer uses). The holder refreshes its mtime every LOCK_UPDATE_MS; another
 * writer breaks it once it is older than LOCK_STALE_MS (or more than
 * LOCK_STALE_MS in the future: the clock stepped, or someone touched it).
 *
 * No lost write (13.1): a writer may lose its lock while paused (SIGSTOP, swap,
 * a huge tracker on a loaded machine). Right before its rename it therefore
 * checks that it still holds the lock AND that `beads.jsonl` is still the very
 * file it read (dev, ino, size, mtime). If not, it throws its temp file away
 * and repeats lock → read → change → write, up to MAX_WRITE_RETRIES more times,
 * then exits 2. A paused writer never renames an old snapshot over a newer file.
 *
 * Regular files only (13.2): the file is opened O_NONBLOCK and fstat'ed before
 * any byte is read, so a FIFO, a device (`/dev/zero` behind a symlink), a
 * directory or a socket is refused at once instead of blocking the process.
 *
 * Cache (issue 11): readTracker keeps the last parse per file, keyed on the
 * file's identity (dev, ino, size, mtime in ns) which is checked with a stat on
 * EVERY read: "re-read before every decision" still holds, but an unchanged
 * file is not parsed again. A snapshot from readTracker is shared: treat it as
 * read-only (mutations get their own fresh parse under the lock).
 */
import {closeSync, constants as FS, fstatSync, openSync, promises as fsp, readFileSync, statSync, writeFileSync, existsSync, type BigIntStats} from 'node:fs'
import path from 'node:path'
import {HelixError, EXIT} from '../util/errors.js'
import {pidAlive} from '../state/pidfile.js'
import {processStartMs} from '../proc/pid-identity.js'
import {appendDurable, atomicWrite, removeOldTempFiles, writeTarget} from '../util/atomic-write.js'
import type {ProjectPaths} from '../util/root.js'
import type {Bead, TrackerSnapshot} from './types.js'
import {cloneSnapshot, parseTrackerAfter, rejectedFileName, serializeTrackerWithSnapshot, supersededDuplicateLines} from './codec.js'

export const LOCK_STALE_MS = 10_000
export const LOCK_UPDATE_MS = 2_000
/** after the first attempt, how many more times a mutation whose check failed is redone */
export const MAX_WRITE_RETRIES = 3
/** temp files of killed writers older than this are removed by the next writer */
export const TEMP_MAX_AGE_MS = 10 * 60_000
/** `.beads.jsonl.tmp-*` (this store) and `helix.pid.*.tmp` (the run mutex) */
export const TEMP_FILE_PATTERN = /^(\.beads\.jsonl\.tmp-.+|helix\.pid\..+\.tmp|\.run-state\.json\.tmp-.+)$/
const RETRY_MIN_MS = 25
const RETRY_MAX_MS = 120
export const DEFAULT_LOCK_TIMEOUT_SEC = 10

/** What makes "the same file": any rename, rewrite or append changes one of these. */
export interface FileIdentity {
  dev: bigint
  ino: bigint
  size: bigint
  mtimeNs: bigint
}

function identityOf(st: BigIntStats): FileIdentity {
  return {dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs}
}

export function sameIdentity(a: FileIdentity | null, b: FileIdentity | null): boolean {
  if (a === null || b === null) return a === b
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs
}

export function notRegularFile(file: string): HelixError {
  return new HelixError(`${file} is not a regular file`, EXIT.ERROR)
}

/**
 * The tracker's bytes and identity, or null when it does not exist. Never
 * blocks: opened O_NONBLOCK and fstat'ed before reading; anything but a
 * regular file (after following symlinks) is refused with exit 1.
 * `known`: when the file still has this identity, the bytes are not read (buf is null).
 */
export function readTrackerBytes(file: string, known?: FileIdentity): {buf: Buffer | null; id: FileIdentity} | null {
  let fd: number
  try {
    fd = openSync(file, FS.O_RDONLY | FS.O_NONBLOCK | FS.O_NOCTTY)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return null
    // a socket cannot be opened (ENXIO); name the real problem
    if (code === 'ENXIO' || code === 'EISDIR' || code === 'ELOOP') throw notRegularFile(file)
    throw new HelixError(`cannot read ${file}: ${(error as Error).message}`, EXIT.ERROR)
  }
  try {
    const st = fstatSync(fd, {bigint: true})
    if (!st.isFile()) throw notRegularFile(file)
    const id = identityOf(st)
    if (known && sameIdentity(known, id)) return {buf: null, id}
    // One synchronous read: measurably faster than the chunked async read for
    // multi-MB trackers, and readers never wait on anything else meanwhile.
    return {buf: readFileSync(fd), id}
  } catch (error) {
    if (error instanceof HelixError) throw error
    throw new HelixError(`cannot read ${file}: ${(error as Error).message}`, EXIT.ERROR)
  } finally {
    closeSync(fd)
  }
}

/** Identity of the file at `file` now (following symlinks), null when missing. */
function currentIdentity(file: string): FileIdentity | null {
  try {
    return identityOf(statSync(file, {bigint: true}))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}

/**
 * per file: the identity last seen and its parse. The cached snapshot is never
 * modified: readTracker hands it out read-only, mutations work on a copy.
 */
const cache = new Map<string, {id: FileIdentity; snap: TrackerSnapshot}>()

/** Forget cached parses (tests). */
export function clearTrackerCache(): void {
  cache.clear()
}

function emptySnap(): TrackerSnapshot {
  return {beads: [], byId: new Map(), duplicateIds: []}
}

/**
 * Read and parse the tracker. A missing file is an empty tracker. No lock.
 * Stats the file on every call; parses only when its identity changed.
 */
export async function readTracker(file: string): Promise<TrackerSnapshot> {
  const hit = cache.get(file)
  const r = readTrackerBytes(file, hit?.id)
  if (r === null) {
    cache.delete(file)
    return emptySnap()
  }
  if (r.buf === null && hit) return hit.snap
  // the lines that did not change keep the previous parse of their bytes
  const snap = parseTrackerAfter(r.buf ?? Buffer.alloc(0), file, hit?.snap)
  cache.set(file, {id: r.id, snap})
  return snap
}

/** Raw bytes of the tracker (empty when missing). Refuses non-regular files. */
export async function readTrackerRaw(file: string): Promise<Buffer> {
  return readTrackerBytes(file)?.buf ?? Buffer.alloc(0)
}

/** Raw text of the tracker ('' when missing). */
export async function readTrackerText(file: string): Promise<string> {
  return (await readTrackerRaw(file)).toString('utf8')
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

/**
 * Atomically replace `file` with `text` (see util/atomic-write.ts: temp beside
 * the real target, fsync, rename, fsync dir; a symlink stays a symlink).
 */
export async function writeFileDurable(file: string, text: string | Uint8Array): Promise<void> {
  await atomicWrite(file, text)
}

/** Append `text` to `file` (created if missing) and fsync it. */
export async function appendFileDurable(file: string, text: string | Uint8Array): Promise<void> {
  await appendDurable(file, text)
}

export interface MutationOutcome<T> {
  /** the new full bead list to write, or null to leave the file untouched */
  beads: Bead[] | null
  result: T
}

/** Thrown inside the write when the lock or the file changed under us: redo the mutation. */
class ChangedUnderLock extends Error {}

export const CHANGED_UNDER_LOCK_MESSAGE = 'tracker changed under a held lock; nothing written (retry)'

/** true when our lock directory still exists and was refreshed within the stale window (nobody may have broken it). */
async function lockStillHeld(lock: HeldLock, lockDir: string): Promise<boolean> {
  if (lock.compromised()) return false
  try {
    const age = Date.now() - (await fsp.stat(lockDir)).mtimeMs
    return age < LOCK_STALE_MS && age > -LOCK_STALE_MS
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

/**
 * TEST-ONLY hook (documented in docs/tracker-format.md): with
 * `HELIX_TEST_PAUSE_BEFORE_RENAME=<file>` set, the first write attempt of a
 * mutation creates <file> (holding its pid) once its temp file is durable and
 * waits, right before the lock/identity check and the rename, until <file> is
 * removed. The torture test SIGSTOPs the writer there deterministically.
 */
async function testPauseBeforeRename(env: NodeJS.ProcessEnv): Promise<void> {
  const marker = env.HELIX_TEST_PAUSE_BEFORE_RENAME
  if (!marker) return
  writeFileSync(marker, `${process.pid}\n`)
  while (existsSync(marker)) await sleep(10)
}

/** Remove temp files left by killed writers (> 10 min old) beside the tracker and its target. */
export async function removeStaleTempFiles(paths: Pick<ProjectPaths, 'dir' | 'file'> & Partial<Pick<ProjectPaths, 'pidFile' | 'runState'>>, now: number = Date.now()): Promise<string[]> {
  const dirs = new Set([paths.dir])
  // the pid file and run-state live in `.ddx/` even when DDX_BEAD_DIR moves the tracker
  if (paths.pidFile) dirs.add(path.dirname(paths.pidFile))
  if (paths.runState) dirs.add(path.dirname(paths.runState))
  try {
    dirs.add(path.dirname(await writeTarget(paths.file)))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const removed: string[] = []
  for (const d of dirs) removed.push(...(await removeOldTempFiles(d, TEMP_FILE_PATTERN, TEMP_MAX_AGE_MS, now)))
  return removed
}

/**
 * Locked read-modify-write. `fn` gets a fresh snapshot read under the lock and
 * returns the beads to write (null = no write) and a result. Unchanged beads
 * are written back byte for byte, so a one-bead change touches one line.
 * `fn` may be async, but must not do anything slow (never an agent call), and
 * may run more than once (when the file changed under the lock, SPEC 13.1).
 */
export async function mutateTracker<T>(
  paths: ProjectPaths,
  fn: (snap: TrackerSnapshot) => MutationOutcome<T> | Promise<MutationOutcome<T>>,
  opts: {timeoutSec?: number; onWarning?: (line: string) => void; env?: NodeJS.ProcessEnv} = {},
): Promise<T> {
  const timeoutSec = opts.timeoutSec ?? lockTimeoutSec()
  const env = opts.env ?? process.env
  for (let attempt = 0; attempt <= MAX_WRITE_RETRIES; attempt++) {
    const lock = await acquireTrackerLock(paths, timeoutSec)
    try {
      try {
        await removeStaleTempFiles(paths)
      } catch {
        // housekeeping only: a temp file we cannot remove is never a reason to refuse a write
      }
      // Read under the lock: the stat is fresh; an unchanged file (same identity
      // as the cached parse) is not read or parsed again (issue 11). A file with
      // duplicate ids is always read: its superseded lines are saved below.
      const hit = cache.get(paths.file)
      const known = hit && hit.snap.duplicateIds.length === 0 ? hit : undefined
      const read = readTrackerBytes(paths.file, known?.id)
      const original = read?.buf ?? Buffer.alloc(0)
      const readId = read?.id ?? null
      let base: TrackerSnapshot
      if (read !== null && read.buf === null && known) base = known.snap
      else {
        base = parseTrackerAfter(original, paths.file, hit?.snap)
        if (read === null) cache.delete(paths.file)
        else cache.set(paths.file, {id: read.id, snap: base})
      }
      // fn changes its own copy; the cached parse stays what the file says
      const snap = cloneSnapshot(base)
      await yieldToTimers()
      const {beads, result} = await fn(snap)
      if (beads === null) return result
      await yieldToTimers()
      const {buf: bytes, snap: written} = serializeTrackerWithSnapshot(beads)
      // Let proper-lockfile's mtime refresh run (and report a compromise) between
      // the long synchronous steps of a very large tracker.
      await yieldToTimers()
      // Duplicate ids: the rewrite keeps the last copy (DDx rule); the earlier
      // copies are saved verbatim next to the tracker, never dropped silently.
      const losers = supersededDuplicateLines(original, snap)
      let rejected: string | null = null
      await atomicWrite(paths.file, bytes, {
        beforeRename: async () => {
          if (attempt === 0) await testPauseBeforeRename(env)
          if (!(await lockStillHeld(lock, paths.lockDir)) || !sameIdentity(readId, currentIdentity(paths.file))) throw new ChangedUnderLock()
          if (losers.length) {
            rejected = rejectedFileName(paths.file)
            await appendDurable(rejected, Buffer.concat(losers.flatMap((l) => [l.bytes, Buffer.from('\n')])))
          }
        },
      })
      if (rejected !== null) {
        const warn = opts.onWarning ?? ((line: string) => process.stderr.write(line + '\n'))
        warn(`helix: warning: duplicate id(s) ${snap.duplicateIds.join(', ')}: kept the last line of each; saved ${losers.length} earlier line(s) to ${rejected}`)
      }
      rememberWrite(paths.file, bytes, written)
      return result
    } catch (error) {
      if (!(error instanceof ChangedUnderLock)) throw error
    } finally {
      await lock.release()
    }
  }
  throw new HelixError(CHANGED_UNDER_LOCK_MESSAGE, EXIT.BUSY)
}

/**
 * Keep a write's own result in the read cache, under the identity of the file
 * just written (still under the lock): the next read neither reads nor parses
 * the file again; `snap` is exactly what a fresh parse of `bytes` yields.
 */
function rememberWrite(file: string, bytes: Buffer, snap: TrackerSnapshot | null): void {
  const id = currentIdentity(file)
  if (snap === null || id === null || id.size !== BigInt(bytes.length)) {
    cache.delete(file)
    return
  }
  cache.set(file, {id, snap})
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
export const breakDeadDdxLock = breakStaleLock

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
