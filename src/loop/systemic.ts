/**
 * Agent health (SPEC 14.2–14.4, 14.6), pure: the systemic-failure detector, the
 * quota pause plan, the budget check. The loop feeds them; they decide nothing else.
 */

/** SPEC 14.2: digits and hex runs folded, so `req 4f2a91c…` and `req 88b10e…` are one line. */
export function foldFailureLine(line: string): string {
  return line
    .trim()
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{6,}\b/gi, '#')
    .replace(/\d+/g, '#')
}

export type AttemptEndKind = 'ok' | 'fail' | 'timeout' | 'stall'

export interface AttemptEnd {
  bead: string
  kind: AttemptEndKind
  /** the failure line (fail), or `stalled: no output for Ns` / `timed out after Ns` */
  line: string | null
  durationMs: number
}

const FAST_MS = 60_000

/**
 * "In a row" is the order in which attempts end, across slots. Returns the reason
 * when this end makes the failure systemic (the agent, not the bead), else null.
 */
export class SystemicDetector {
  private prev: AttemptEnd | null = null

  record(end: AttemptEnd): string | null {
    const prev = this.prev
    this.prev = end
    if (!prev || prev.bead === end.bead) return null
    const slow = (k: AttemptEndKind) => k === 'timeout' || k === 'stall'
    if (slow(prev.kind) && slow(end.kind)) return end.line ?? (end.kind === 'stall' ? 'stalled' : 'timed out')
    if (prev.kind !== 'fail' || end.kind !== 'fail') return null
    if (prev.durationMs >= FAST_MS || end.durationMs >= FAST_MS) return null
    if (!prev.line || !end.line) return null
    return foldFailureLine(prev.line) === foldFailureLine(end.line) ? end.line : null
  }
}

export type QuotaPlan = {kind: 'sleep'; until: Date; ms: number} | {kind: 'stop'; message: string}

const PROBE_FIRST_MIN = 15
const PROBE_MAX_MIN = 60

/**
 * SPEC 14.3. `resetAt` from the agent, else a probe after 15 min doubling to 60
 * (`probe` counts the probes of this pause, 0 first). The whole pause, from
 * `pauseStart`, is bounded by `maxWaitSec`.
 */
export function planQuotaPause(a: {now: Date; resetAt: string | null; pauseStart: Date; probe: number; maxWaitSec: number}): QuotaPlan {
  const limit = a.pauseStart.getTime() + a.maxWaitSec * 1000
  if (a.resetAt !== null && Number.isFinite(Date.parse(a.resetAt))) {
    const until = new Date(Math.max(Date.parse(a.resetAt), a.now.getTime()))
    if (until.getTime() > limit) return {kind: 'stop', message: `helix: quota resets at ${new Date(Date.parse(a.resetAt)).toISOString()}, beyond --max-quota-wait; stopping`}
    return {kind: 'sleep', until, ms: until.getTime() - a.now.getTime()}
  }
  const minutes = Math.min(PROBE_FIRST_MIN * 2 ** Math.max(0, a.probe), PROBE_MAX_MIN)
  const until = new Date(a.now.getTime() + minutes * 60_000)
  if (until.getTime() > limit) {
    const waited = durationText(a.now.getTime() - a.pauseStart.getTime())
    return {kind: 'stop', message: `helix: quota still exhausted after ${waited} and the agent gave no reset time; beyond --max-quota-wait; stopping`}
  }
  return {kind: 'sleep', until, ms: until.getTime() - a.now.getTime()}
}

/** `1h42m`, `15m`, `40s` */
export function durationText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s}s`
  const m = Math.round(s / 60)
  if (m < 60) return `${m}m`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`
}

/** local `HH:MM` */
export function hhmm(d: Date): string {
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`
}

export interface Budgets {
  maxTokens?: number
  maxCost?: number
}

/** SPEC 14.6: the stop line once a budget is reached, else null. */
export function budgetReached(b: Budgets, tokens: number, costUsd: number): string | null {
  if (b.maxTokens !== undefined && b.maxTokens > 0 && tokens >= b.maxTokens) return `helix: token budget reached (${tokens} of ${b.maxTokens}); stopping`
  if (b.maxCost !== undefined && b.maxCost > 0 && costUsd >= b.maxCost) return `helix: cost budget reached ($${costUsd.toFixed(2)} of $${b.maxCost.toFixed(2)}); stopping`
  return null
}
