/**
 * The one watcher per project (SPEC 22.1's cost rule): inotify on the two directories
 * that hold the run's state, history and logs — `.ddx/` (run-state, the tracker, the
 * pid file) and `.helix-logs/` (runs.jsonl, session logs) — shared by every open page.
 * A burst of changes (an agent printing) becomes one refresh after `settleMs`; nothing
 * runs while nothing changes.
 */
import {watch, type FSWatcher} from 'node:fs'
import path from 'node:path'

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
}

export interface ProjectWatch {
  close(): void
}

export type WatchFactory = (root: string, onChange: () => void) => ProjectWatch

/** How long a burst of file events is left to settle before the page state is recomputed. */
export const SETTLE_MS = 100
/** At most one recomputation this often while an agent keeps printing (its log grows line by line). */
export const MIN_GAP_MS = 200

/** The directories watched, by their name under the project root. */
const WATCHED = ['.ddx', '.helix-logs'] as const

/**
 * The real watcher: `.ddx/` and `.helix-logs/`, and the project root for those two
 * names only. A directory that is removed and made again (a checkout of a commit
 * without it and back, `git stash -u`, a restore) is watched anew when it reappears:
 * a watch stays on the inode it was given, so the old one would never fire again.
 */
export function watchProject(root: string, onChange: () => void, timers: Timers = realTimers, settleMs = SETTLE_MS): ProjectWatch {
  let pending: unknown = null
  let closed = false
  let lastMs = -Infinity
  const fire = () => {
    if (closed || pending !== null) return
    const wait = Math.max(settleMs, lastMs + MIN_GAP_MS - Date.now())
    pending = timers.setTimeout(() => {
      pending = null
      lastMs = Date.now()
      if (!closed) onChange()
    }, wait)
  }
  const dirs = new Map<string, FSWatcher>()
  /** (re)watches `name`: the old watch is dropped; an absent directory is watched once it appears */
  const attach = (name: string) => {
    dirs.get(name)?.close()
    dirs.delete(name)
    if (closed) return
    try {
      const w = watch(path.join(root, name), {persistent: true}, fire)
      // removed under us: dropped; the root's watch attaches the next one
      w.on('error', () => {
        w.close()
        if (dirs.get(name) === w) dirs.delete(name)
      })
      dirs.set(name, w)
    } catch {
      // absent (no .helix-logs before the first run): the root's watch sees it appear
    }
  }
  const top = watch(root, {persistent: true}, (_event, file) => {
    const name = file === null ? null : String(file)
    if (name !== null && !(WATCHED as readonly string[]).includes(name)) return // the agent's own files
    for (const n of WATCHED) if (name === null || name === n) attach(n)
    fire()
  })
  top.on('error', () => undefined) // the project itself removed: the page keeps the last state
  for (const n of WATCHED) attach(n)
  return {
    close() {
      closed = true
      if (pending !== null) timers.clearTimeout(pending)
      top.close()
      for (const w of dirs.values()) w.close()
      dirs.clear()
    },
  }
}
