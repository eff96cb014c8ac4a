/**
 * Is the live process named by `.ddx/helix.pid` really the run that wrote it?
 * The pid file survives a reboot (or a crash followed by much later use), and
 * its pid may by then belong to an unrelated process: status would show a
 * phantom run and stop would signal a stranger. On Linux the process start time
 * (boot time + /proc/<pid>/stat field 22) must not be later than the time the
 * pid file records (the run writes it right after it starts), give or take a
 * slack for clock granularity. Elsewhere, or when anything is unreadable, the
 * answer is "yes" (trust kill(0), as before).
 */
import {readFileSync} from 'node:fs'

const CLK_TCK = 100 // Linux USER_HZ; not configurable per process
const SLACK_MS = 30_000

let bootMs: number | null | undefined

function bootTimeMs(): number | null {
  if (bootMs !== undefined) return bootMs
  try {
    const m = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))
    bootMs = m ? Number(m[1]) * 1000 : null
  } catch {
    // no /proc/stat (not Linux): boot time unknown, identity falls back to the pid
    bootMs = null
  }
  return bootMs
}

/** Start time of `pid` in epoch ms, or null when unknown. */
export function processStartMs(pid: number): number | null {
  const boot = bootTimeMs()
  if (boot === null) return null
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const ticks = Number(fields[19]) // field 22 overall
    if (!Number.isFinite(ticks)) return null
    return boot + (ticks * 1000) / CLK_TCK
  } catch {
    // the process is gone (or no /proc): no start time
    return null
  }
}

/** true when /proc/<pid>/cmdline looks like `helix run` (node …/bin/run.js run …, or a `helix` shim); null when unreadable. */
export function looksLikeHelixRun(pid: number): boolean | null {
  let argv: string[]
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
  } catch {
    // the process is gone (or not ours): no argv to compare
    return null
  }
  if (argv.length === 0) return null
  const helixish = argv.some((a) => a.endsWith('/run.js') || a.endsWith('/helix') || a === 'helix' || a.includes('helix'))
  return helixish && argv.includes('run')
}

/** A start field more than this far ahead of the clock is "in the future". */
export const FUTURE_START_SLACK_MS = 5 * 60_000

/**
 * The pid file's start field is usable evidence: an ISO-8601 UTC time (what
 * `helix run` writes) that is not in the future. A missing, unparsable or
 * future start means the file was not written by a run (or was tampered
 * with): its pid is never signalled and never counts as a live run.
 */
export function validStartField(startedIso: string | undefined, now: number = Date.now()): boolean {
  if (typeof startedIso !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(startedIso)) return false
  const t = Date.parse(startedIso)
  return !Number.isNaN(t) && t - now <= FUTURE_START_SLACK_MS
}

/**
 * false when the start field is not valid evidence (validStartField), or when
 * we can tell the process is not the run: it started after the
 * pid file says the run started AND its command line is not a helix run. Both
 * are required so that a wall-clock step forward during a long run (which
 * shifts the computed start time) never makes a live run look stale — status
 * would otherwise remove a live run's mutex.
 */
export function pidMatchesRecord(pid: number, startedIso: string): boolean {
  if (!validStartField(startedIso)) return false
  const recorded = Date.parse(startedIso)
  const start = processStartMs(pid)
  if (start === null) return true
  if (start <= recorded + SLACK_MS) return true
  return looksLikeHelixRun(pid) !== false
}
