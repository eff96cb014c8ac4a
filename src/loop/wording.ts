/** The words of the loop's lines (SPEC 6, 16.3), pure. Untrusted text goes through sanitize. */
import type {DispatchResult} from '../agents/types.js'
import type {CycleOutcome} from '../state/types.js'
import {sanitize} from '../util/sanitize.js'

/** one line, at most `max` characters (an ellipsis marks the cut) */
export function fit(text: string, max: number): string {
  const one = sanitize(text)
  return one.length <= max ? one : one.slice(0, Math.max(0, max - 1)) + '…'
}

/** ` — <title>` cut to fit an 80-column line after `prefix`, '' without a title */
export function titleSuffix(prefix: string, title: unknown): string {
  if (typeof title !== 'string' || title.trim() === '') return ''
  const room = Math.max(20, 100 - prefix.length - 3)
  return ` — ${fit(title, room)}`
}

/** helix's own tracker-lock timeout (src/tracker/store.ts), as the agent's `helix tracker …` printed it */
const TRACKER_LOCKED = /tracker is locked by another writer \(waited [\d.]+s\)/

/**
 * The agent's own `helix tracker close` (or update) timed out on the tracker lock: the
 * bead's work may be done, and neither the agent nor the bead is at fault. Its line, else null.
 */
export function trackerLockLineOf(res: DispatchResult): string | null {
  const m = TRACKER_LOCKED.exec(res.text)
  return m ? `tracker lock timeout in the agent's tracker command: ${m[0]}` : null
}

/** the failure line: helix's own tracker-lock timeout, the agent's own error text, else the last non-blank output line */
export function failureLineOf(res: DispatchResult): string | null {
  const locked = trackerLockLineOf(res)
  if (locked) return locked
  if (res.verdict.failureLine) return res.verdict.failureLine
  const lines = res.text.split('\n').map((l) => l.trim()).filter((l) => l !== '')
  return lines.length > 0 ? (lines[lines.length - 1] as string) : null
}

export type FailedOutcome = Extract<CycleOutcome, 'FAILED' | 'NOT_COMPLETED' | 'STALLED' | 'TIMEOUT' | 'NOT_LANDED'>

/** why a cycle did not complete, as run-state `reason` keeps it */
export function failureReason(outcome: FailedOutcome, res: DispatchResult, limits: {timeoutSec?: number; stallTimeoutSec?: number}, landing?: string): string {
  switch (outcome) {
    case 'FAILED': {
      const line = failureLineOf(res)
      return line ? `rc=${res.rc}: ${fit(line, 160)}` : `rc=${res.rc}`
    }
    case 'NOT_COMPLETED':
      return trackerLockLineOf(res) ?? 'bead still open'
    case 'STALLED':
      return `stalled (${stallWords(limits.stallTimeoutSec)})`
    case 'TIMEOUT':
      return `timed out (${timeoutWords(limits.timeoutSec)})`
    case 'NOT_LANDED':
      return landing ?? 'not landed'
  }
}

/** a command agent named by a path (`/opt/bin/agent.sh`) by its last part (`agent.sh`); a plain name as it is */
export function shortAgentName(name: string): string {
  const parts = name.split('/').filter((p) => p !== '')
  return parts.length > 0 ? (parts[parts.length - 1] as string) : name
}

/** `no output for 20s`: why the stall guard ended an attempt (SPEC 22.2) */
export function stallWords(seconds: number | undefined): string {
  return `no output for ${seconds ?? '?'}s`
}

/** `no result after 30s`: why the timeout ended an attempt */
export function timeoutWords(seconds: number | undefined): string {
  return `no result after ${seconds ?? '?'}s`
}

/**
 * The reason a bead is blocked with (SPEC 5.6 + 22.2): 5.6's words, then the last
 * attempt's reason: `intractable after 4 attempts with exponential backoff; last: rc=1: tests fail`.
 * One function for one host and for `--remote`, so both say the same words.
 */
export function blockedReason(attempts: number, allFailed: boolean, last: string | null | undefined): string {
  const head = allFailed ? `intractable after ${attempts} attempts with exponential backoff` : `failed to complete after ${attempts} attempts with exponential backoff`
  const why = typeof last === 'string' ? fit(last, 160) : ''
  return why === '' ? head : `${head}; last: ${why}`
}

/** `→ FAILED (rc=1: …)`, `→ NOT COMPLETED (bead still open)`, `→ STALLED (no output for 20s)`, `→ TIMEOUT (no result after 30s)`, `→ NOT LANDED (…)` */
export function failureArrow(outcome: FailedOutcome, reason: string, limits: {timeoutSec?: number; stallTimeoutSec?: number} = {}): string {
  switch (outcome) {
    case 'FAILED':
      return `→ FAILED (${fit(reason, 120)})`
    case 'NOT_COMPLETED':
      return `→ NOT COMPLETED (${reason})`
    case 'STALLED':
      return `→ STALLED (${stallWords(limits.stallTimeoutSec)})`
    case 'TIMEOUT':
      return `→ TIMEOUT (${timeoutWords(limits.timeoutSec)})`
    case 'NOT_LANDED':
      return `→ NOT LANDED (${fit(reason, 120)})`
  }
}
