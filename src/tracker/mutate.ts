/**
 * Locked read-modify-write of the tracker (SPEC 2.2, 13.1): lock → read →
 * change → temp file → fsync → check → rename → release.
 *
 * No lost write (13.1): a writer may lose its lock while paused (SIGSTOP, swap,
 * a huge tracker on a loaded machine). Right before its rename it therefore
 * checks that it still holds the lock AND that `beads.jsonl` is still the very
 * file it read (dev, ino, size, mtime). If not, it throws its temp file away
 * and repeats lock → read → change → write, up to MAX_WRITE_RETRIES more times,
 * then exits 2. A paused writer never renames an old snapshot over a newer file.
 *
 * Cost: beyond the one read (none when the cached parse is still the
 * file) and the one write, a mutation costs the beads it changes: the change
 * function gets a copy-on-write view (cow.ts), unchanged lines are copied as
 * blocks of bytes, and the written parse is kept for the next read.
 */
import {existsSync, renameSync, writeFileSync} from 'node:fs'
import {HelixError, EXIT} from '../util/errors.js'
import {appendDurable, atomicWrite} from '../util/atomic-write.js'
import type {ProjectPaths} from '../util/root.js'
import type {Bead, TrackerSnapshot} from './types.js'
import {currentIdentity, readTrackerBytes, sameIdentity} from './read-file.js'
import {cachedParse, rememberParse, rememberWrite} from './read-cache.js'
import {acquireTrackerLock, lockStillHeld, lockTimeoutSec} from './lock.js'
import {removeStaleTempFiles} from './temp-files.js'
import {parseTrackerAfter} from './incremental.js'
import {supersededDuplicateLines} from './decode.js'
import {rejectedFileName, serializeTrackerWithSnapshot} from './encode-file.js'
import {cowSnapshot} from './cow.js'

/** after the first attempt, how many more times a mutation whose check failed is redone */
export const MAX_WRITE_RETRIES = 3
export const CHANGED_UNDER_LOCK_MESSAGE = 'tracker changed under a held lock; nothing written (retry)'
/** a mutation looks for killed writers' temp files at most this often per directory (they matter only after 10 minutes) */
const TEMP_SWEEP_EVERY_MS = 60_000
/** longer synchronous steps than this yield once, so proper-lockfile's refresh timer runs */
const YIELD_AFTER_MS = 50

export interface MutationOutcome<T> {
  /** the new full bead list to write, or null to leave the file untouched */
  beads: Bead[] | null
  result: T
}

/** Thrown inside the write when the lock or the file changed under us: redo the mutation. */
class ChangedUnderLock extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const yieldToTimers = () => new Promise((r) => setTimeout(r, 0))

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
  // whole or absent: the test reads the pid as soon as the file exists
  writeFileSync(`${marker}.tmp`, `${process.pid}\n`)
  renameSync(`${marker}.tmp`, marker)
  while (existsSync(marker)) await sleep(10)
}

const lastSweep = new Map<string, number>()

async function sweepTempFiles(paths: ProjectPaths): Promise<void> {
  const now = Date.now()
  if (now - (lastSweep.get(paths.dir) ?? -Infinity) < TEMP_SWEEP_EVERY_MS) return
  lastSweep.set(paths.dir, now)
  try {
    await removeStaleTempFiles(paths, now)
  } catch {
    // housekeeping only: a temp file we cannot remove is never a reason to refuse a write
  }
}

/** Atomically replace `file` with `text` (util/atomic-write.ts: temp beside the real target, fsync, rename, fsync dir). */
export async function writeFileDurable(file: string, text: string | Uint8Array): Promise<void> {
  await atomicWrite(file, text)
}

/** Append `text` to `file` (created if missing) and fsync it. */
export async function appendFileDurable(file: string, text: string | Uint8Array): Promise<void> {
  await appendDurable(file, text)
}

/**
 * Locked read-modify-write. `fn` gets the snapshot read under the lock as a
 * copy-on-write view: it changes only beads it got from `snap.byId.get(id)`
 * and returns the beads to write (null = no write) and a result. Unchanged
 * beads are written back byte for byte, so a one-bead change touches one line.
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
      await sweepTempFiles(paths)
      let mark = Date.now()
      // Let proper-lockfile's mtime refresh run (and report a compromise)
      // between the long synchronous steps of a very large tracker.
      const breathe = async () => {
        if (Date.now() - mark < YIELD_AFTER_MS) return
        await yieldToTimers()
        mark = Date.now()
      }
      // Read under the lock: the stat is fresh; an unchanged file (same identity
      // as the cached parse) is not read or parsed again. A file with
      // duplicate ids is always read: its superseded lines are saved below.
      const hit = cachedParse(paths.file)
      const known = hit && hit.snap.duplicateIds.length === 0 ? hit : undefined
      const read = readTrackerBytes(paths.file, known?.id)
      const original = read?.buf ?? Buffer.alloc(0)
      const readId = read?.id ?? null
      let base: TrackerSnapshot
      if (read !== null && read.buf === null && known) base = known.snap
      else {
        base = parseTrackerAfter(original, paths.file, hit?.snap)
        rememberParse(paths.file, readId, base)
      }
      // fn changes its own copies; the cached parse stays what the file says
      const snap = cowSnapshot(base)
      await breathe()
      const {beads, result} = await fn(snap)
      if (beads === null) return result
      await breathe()
      const out = snap.resolve(beads)
      const {bytes, snap: written} = serializeTrackerWithSnapshot(out.beads, {untouched: out.untouched, base})
      await breathe()
      // Duplicate ids: the rewrite keeps the last copy (DDx rule); the earlier
      // copies are saved verbatim next to the tracker, never dropped silently.
      const losers = supersededDuplicateLines(original, snap)
      let rejected: string | null = null
      await atomicWrite(paths.file, bytes.parts, {
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
