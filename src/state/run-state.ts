import {closeSync, constants as FS, fstatSync, mkdirSync, openSync, readFileSync, rmdirSync} from 'node:fs'
import path from 'node:path'
import type {RunState} from './types.js'
import {abortableSleep} from '../util/abort.js'
import {atomicWrite} from '../util/atomic-write.js'
import {HelixError, EXIT, fsErrorWords} from '../util/errors.js'

export function emptyRunState(now: Date = new Date()): RunState {
  return {
    pid: null,
    started_at: null,
    updated_at: now.toISOString(),
    phase: 'idle',
    agent: null,
    review_agent: null,
    current_cycle: 0,
    attempted_cycles: 0,
    completed_cycles: 0,
    closed_beads: [],
    skipped: [],
    attempts: {},
    backoff_until: {},
    current_bead: null,
    current_bead_started_at: null,
    focused_epic: null,
    total_tokens: 0,
    cycles: [],
    stop_reason: null,
    last_run: null,
    parallel_run_denied_count: 0,
    log: null,
    injected_supervisory: [],
  }
}

type Check = (v: unknown) => boolean

const isStr: Check = (v) => typeof v === 'string'
const isNum: Check = (v) => typeof v === 'number' && Number.isFinite(v)
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const orNull = (c: Check): Check => (v) => v === null || c(v)
const arrayOf = (c: Check): Check => (v) => Array.isArray(v) && v.every(c)
const mapOf = (c: Check): Check => (v) => isObj(v) && Object.values(v).every(c)
const withId: Check = (v) => isObj(v) && typeof v.id === 'string'

/**
 * The type every known key must have. run-state is helix's own file, but it
 * outlives versions and can be edited by hand; a value of the wrong type
 * (e.g. `"skipped": "x"`) would otherwise crash status and next, so it falls
 * back to the empty state's value instead.
 */
const SHAPE: Record<string, Check> = {
  pid: orNull(isNum),
  started_at: orNull(isStr),
  updated_at: isStr,
  phase: isStr,
  agent: orNull(isStr),
  review_agent: orNull(isStr),
  current_cycle: isNum,
  attempted_cycles: isNum,
  completed_cycles: isNum,
  closed_beads: arrayOf(isStr),
  skipped: arrayOf(withId),
  attempts: mapOf(isNum),
  backoff_until: mapOf(isStr),
  current_bead: orNull(isStr),
  current_bead_started_at: orNull(isStr),
  focused_epic: orNull(isStr),
  total_tokens: isNum,
  cycles: arrayOf(isObj),
  stop_reason: orNull(isStr),
  last_run: orNull(isObj),
  parallel_run_denied_count: isNum,
  log: orNull(isStr),
  injected_supervisory: arrayOf(withId),
}

/**
 * Why run-state exists but gives no state (readRunState's null for a file that is there):
 * `not valid JSON (cut short, or edited by hand)`, `not a regular file`, … ; null when the file is
 * missing or reads as a state. Status says it, so a broken file is not shown as "no run yet".
 */
export function runStateProblem(file: string): string | null {
  let text: string
  try {
    const fd = openSync(file, FS.O_RDONLY | FS.O_NONBLOCK | FS.O_NOCTTY)
    try {
      if (!fstatSync(fd).isFile()) return 'not a regular file'
      text = readFileSync(fd, 'utf8')
    } finally {
      closeSync(fd)
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'ENOENT' || code === 'ENOTDIR' ? null : fsErrorWords(error)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return text.trim() === '' ? 'empty' : 'not valid JSON (cut short, or edited by hand)'
  }
  return isObj(parsed) ? null : 'not a JSON object'
}

/**
 * Read run-state; a missing or unreadable file gives null (status treats it as
 * "no run yet"). Known keys holding a value of the wrong type get the empty
 * state's value; unknown keys are kept.
 */
export async function readRunState(file: string): Promise<RunState | null> {
  let text: string
  try {
    // O_NONBLOCK + fstat first: a FIFO or device planted here must not block status
    // synchronous: a small file, and status starts faster without loading the fs/promises streams
    const fd = openSync(file, FS.O_RDONLY | FS.O_NONBLOCK | FS.O_NOCTTY)
    try {
      if (!fstatSync(fd).isFile()) return null
      text = readFileSync(fd, 'utf8')
    } finally {
      closeSync(fd)
    }
  } catch {
    // missing or unreadable: "no run yet" (status must still work)
    return null
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    // torn or hand-edited file: no usable run state (status still works)
    return null
  }
  if (!isObj(parsed)) return null
  const out: Record<string, unknown> = {...emptyRunState()}
  for (const [k, v] of Object.entries(parsed)) {
    const check = SHAPE[k]
    if (!check || check(v)) out[k] = v
  }
  return out as unknown as RunState
}

const STATE_LOCK_STALE_MS = 10_000
const STATE_LOCK_UPDATE_MS = 2_000
const STATE_LOCK_WAIT_MS = 15_000

/** The lock directory of a run-state file: `<dir>/run-state.lock` beside `run-state.json`. */
export function runStateLockDir(file: string): string {
  return path.join(path.dirname(file), path.basename(file).replace(/\.json$/, '') + '.lock')
}

/**
 * Run `fn` holding the run-state lock (proper-lockfile, same stale rules as the
 * tracker lock: 10 s window, refreshed every 2 s). Held for one read-modify-write,
 * never across anything slow.
 */
async function withRunStateLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(path.dirname(file), {recursive: true})
  // Fast path (a run saves its state ~4 times a cycle): a free lock is taken with
  // one synchronous mkdir and given back with one rmdir, proper-lockfile's own protocol (its
  // lock IS that directory, judged stale by its mtime), so other processes' proper-lockfile
  // sees it held. It is held only for this read-modify-write (microseconds of synchronous
  // file calls), far inside the 2 s at which proper-lockfile would refresh it. A lock that
  // is taken already goes through proper-lockfile below (waiting, breaking a stale one).
  const dir = runStateLockDir(file)
  let fast = false
  try {
    mkdirSync(dir)
    fast = true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  if (fast) {
    try {
      return await fn()
    } finally {
      try {
        rmdirSync(dir)
      } catch (error) {
        // broken as stale by another process meanwhile: nothing left to release
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
  }
  const lockfile = (await import('proper-lockfile')).default
  const deadline = Date.now() + STATE_LOCK_WAIT_MS
  let release: () => Promise<void>
  for (;;) {
    try {
      release = await lockfile.lock(file, {
        lockfilePath: runStateLockDir(file),
        realpath: false,
        stale: STATE_LOCK_STALE_MS,
        update: STATE_LOCK_UPDATE_MS,
        retries: 0,
        // losing it mid-write can only reorder two saves of helix's own state
        // file; the next save under the lock corrects it, so keep going
        onCompromised: () => undefined,
      })
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
      if (Date.now() > deadline) throw new HelixError(`run-state is locked by another process (waited ${STATE_LOCK_WAIT_MS / 1000}s)`, EXIT.BUSY)
      await abortableSleep(10 + Math.floor(Math.random() * 40))
    }
  }
  try {
    return await fn()
  } finally {
    try {
      await release()
    } catch (error) {
      // ECOMPROMISED/ERELEASED: another process broke it as stale; nothing left to release
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ECOMPROMISED' && code !== 'ERELEASED' && code !== 'ENOENT') throw error
    }
  }
}

async function writeUnlocked(file: string, state: RunState): Promise<void> {
  // atomic, not fsync'ed: a run rewrites this file ~4 times a cycle, and two fsyncs each blocked
  // every slot's event loop (docs/decisions.md, "Session 29 (lead: workers throughput)")
  await atomicWrite(file, JSON.stringify(state, null, 2) + '\n', {durable: false})
}

/**
 * Locked read-modify-write of run-state (SPEC 13.1): `fn` gets the current
 * state (the empty state when missing) and returns the state to write, or null
 * to write nothing. Returns what was written (or read). Used for
 * `parallel_run_denied_count`: 8 runs started at once → the count is 7.
 */
export async function updateRunState(file: string, fn: (state: RunState) => RunState | null | Promise<RunState | null>, now: Date = new Date()): Promise<RunState> {
  return withRunStateLock(file, async () => {
    const cur = (await readRunState(file)) ?? emptyRunState(now)
    const next = await fn(cur)
    if (next === null) return cur
    await writeUnlocked(file, next)
    return next
  })
}

/**
 * Atomic rewrite (temp file beside it, rename; not fsync'ed, see writeUnlocked) under
 * the run-state lock. Counters other processes bump under the lock while a run
 * holds its state in memory (`parallel_run_denied_count`) never go down: the
 * larger of the file's and the given value is written (and kept in `state`).
 */
export async function writeRunState(file: string, state: RunState): Promise<void> {
  await withRunStateLock(file, async () => {
    const onDisk = await readRunState(file)
    if (onDisk && onDisk.parallel_run_denied_count > (state.parallel_run_denied_count ?? 0)) {
      state.parallel_run_denied_count = onDisk.parallel_run_denied_count
    }
    await writeUnlocked(file, state)
  })
}
