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
import type {ProjectPaths} from '../util/root.js'
import type {Bead, TrackerSnapshot} from './types.js'
import {parseTracker, serializeTracker} from './codec.js'

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
      if (code !== 'ELOCKED') throw new HelixError(`cannot lock ${paths.lockDir}: ${(error as Error).message}`, EXIT.ERROR)
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
  const fh = await fsp.open(tmp, 'wx', 0o644)
  try {
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
  opts: {timeoutSec?: number} = {},
): Promise<T> {
  const timeoutSec = opts.timeoutSec ?? lockTimeoutSec()
  const lock = await acquireTrackerLock(paths, timeoutSec)
  try {
    const snap = await readTracker(paths.file)
    const {beads, result} = await fn(snap)
    if (beads !== null) {
      const text = serializeTracker(beads)
      if (lock.compromised()) {
        throw new HelixError('tracker lock was lost before writing (another writer broke it); nothing written', EXIT.BUSY)
      }
      await writeFileDurable(paths.file, text)
    }
    return result
  } finally {
    await lock.release()
  }
}
