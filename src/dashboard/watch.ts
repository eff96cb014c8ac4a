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

/** The real watcher: `.ddx/` and `.helix-logs/` (attached once it appears). */
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
  const handles: FSWatcher[] = []
  let logs: FSWatcher | null = null
  const attachLogs = () => {
    if (logs || closed) return
    try {
      logs = watch(path.join(root, '.helix-logs'), {persistent: true}, fire)
      logs.on('error', () => {
        logs?.close()
        logs = null
      })
      handles.push(logs)
    } catch {
      // no .helix-logs yet: the first run creates it, and .ddx/ changes then (run-state)
      logs = null
    }
  }
  const ddx = watch(path.join(root, '.ddx'), {persistent: true}, () => {
    attachLogs()
    fire()
  })
  ddx.on('error', () => undefined) // .ddx/ removed under us: the page keeps the last state
  handles.push(ddx)
  attachLogs()
  return {
    close() {
      closed = true
      if (pending !== null) timers.clearTimeout(pending)
      for (const h of handles) h.close()
    },
  }
}
