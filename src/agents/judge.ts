/**
 * The one judgement of an agent call: what a dispatch's result means
 * for the action it ran. The one-shot commands (`helix check`, `review`, …) and
 * the run loop (drain, periodic alignment, post-implementation review) both ask
 * here, so the two can no longer drift apart. Pure: effects (does the backfill
 * report exist?) stay with the caller.
 */
import {BACKFILL_STATUS, BACKFILL_SUCCESS, NEXT_ACTION_CODES, REVIEW_STATUS, trailerInt, trailerValue, type BackfillStatus, type NextActionCode} from './trailers.js'
import type {ActionName, AgentHealth, AgentVerdict, DispatchEnd, DispatchResult} from './types.js'
import {hhmmss} from '../util/time.js'

/** what a successful action said */
export type ActionDone =
  | {action: 'check'; next: NextActionCode}
  | {action: 'review'; status: 'CLEAN'}
  | {action: 'review'; status: 'ISSUES_FOUND'; count: number; filed: number}
  | {action: 'backfill'; status: BackfillStatus; report: string}
  | {action: Exclude<ActionName, 'check' | 'review' | 'backfill'>}

export type Judgement =
  /** the run or command was interrupted; nothing more to say */
  | {kind: 'interrupted'}
  /** the agent itself is unusable or out of quota (SPEC 14.1), whatever the action */
  | {kind: 'unhealthy'; health: Exclude<AgentHealth, {kind: 'ok'}>}
  | {kind: 'timeout'; afterSec: number}
  | {kind: 'stalled'; afterSec: number}
  /** the agent failed: a non-zero exit, a decoded failure (claude is_error, codex turn.failed) or no start */
  | {kind: 'failed'; rc: number; message: string}
  /** the agent exited 0 but its trailers do not say what the action needs */
  | {kind: 'unreadable'; message: string}
  | {kind: 'done'; done: ActionDone}

/** SPEC 3: `helix: [t] <agent> timeout after Ns — killed`. */
export function timeoutMessage(agentName: string, seconds: number, now: Date = new Date()): string {
  return `helix: [${hhmmss(now)}] ${agentName} timeout after ${seconds}s — killed`
}

/** SPEC 14.4: the failure text of an attempt the stall guard killed. */
export function stallMessage(seconds: number): string {
  return `stalled: no output for ${seconds}s`
}

/**
 * An agent helix killed for time (timeout, stall guard) that said nothing but start
 * events and transient notices, the last one a reconnect or retry notice (SPEC 14.1:
 * codex `Reconnecting…`, claude `api_retry`), never got to the bead: it is offline or hung before work, so the agent is
 * unavailable (14.2) and the bead is not blamed. A silent agent (no notice at all)
 * stays a bead failure, as SPEC 14.4 says.
 */
const OFFLINE_NOTICE = /reconnecting|retrying|api_retry|waiting for network|failed to connect|error sending request|stream disconnected|failed to lookup address/i

export function neverWorked(end: DispatchEnd, v: Pick<AgentVerdict, 'health' | 'progressed' | 'failureLine'>): AgentHealth | null {
  if ((end.end !== 'stalled' && end.end !== 'timeout') || v.health.kind !== 'ok' || v.progressed !== false || !v.failureLine) return null
  // a start event alone (a model thinking long before its first event) says nothing about the network
  if (!OFFLINE_NOTICE.test(v.failureLine)) return null
  const notice = v.failureLine.replace(/^\[(?:codex|claude)[^\]]*\]\s*/, '')
  const how = end.end === 'stalled' ? `stalled after ${end.afterSec}s` : `timed out after ${end.afterSec}s`
  return {kind: 'unavailable', reason: `${how} without starting work; its last notice: ${notice}`}
}

/**
 * A quota signal in the middle of a call that then succeeded (exit 0, no decoded
 * failure) was not the agent's last word: claude sends a `rejected` rate-limit event
 * and carries on with overage, codex reports a limit and completes the turn. The
 * call's work stands and nothing pauses; a real limit fails the next call.
 */
export function quotaOutlived(end: DispatchEnd, rc: number, v: Pick<AgentVerdict, 'health' | 'failed'>): boolean {
  return end.end === 'exited' && rc === 0 && !v.failed && v.health.kind === 'quota'
}

/** `plan` is the `design` command */
export function actionWord(action: ActionName): string {
  return action === 'plan' ? 'design' : action
}

/** the exit code that counts: a decoded failure fails the call even when the agent exited 0 */
export function effectiveRc(res: DispatchResult): number {
  return res.verdict.failed && res.rc === 0 ? 1 : res.rc
}

/** true when helix ended the agent for taking too long (a timeout or the stall guard) */
export function killedForTime(res: DispatchResult): boolean {
  return res.end === 'timeout' || res.end === 'stalled'
}

/**
 * Judge one dispatch of `action`. The order is the contract: an interrupt wins,
 * then the agent's health, then how the process ended, then the exit code, then
 * the action's trailers.
 */
export function judgeAction(action: ActionName, res: DispatchResult): Judgement {
  switch (res.end) {
    case 'aborted':
      return {kind: 'interrupted'}
    case 'timeout':
    case 'stalled':
    case 'exited':
    case 'spawn-failed':
      break
    default:
      return assertNever(res)
  }
  const health = res.verdict.health
  if (health.kind !== 'ok') return {kind: 'unhealthy', health}
  if (res.end === 'timeout') return {kind: 'timeout', afterSec: res.afterSec}
  if (res.end === 'stalled') return {kind: 'stalled', afterSec: res.afterSec}
  const rc = res.end === 'spawn-failed' ? res.rc || 127 : effectiveRc(res)
  if (rc !== 0) {
    const why = res.rc === 0 ? "the agent's output reports a failure" : `agent rc=${rc}`
    return {kind: 'failed', rc, message: `${actionWord(action)} failed (${why})`}
  }
  switch (action) {
    case 'check': {
      const next = trailerValue(res.text, 'NEXT_ACTION', NEXT_ACTION_CODES)
      if (!next) return {kind: 'unreadable', message: 'unable to determine NEXT_ACTION from check output'}
      return {kind: 'done', done: {action, next: next as NextActionCode}}
    }
    case 'review': {
      const status = trailerValue(res.text, 'REVIEW_STATUS', REVIEW_STATUS)
      if (!status) return {kind: 'unreadable', message: 'review output missing REVIEW_STATUS trailer'}
      if (status === 'CLEAN') return {kind: 'done', done: {action, status: 'CLEAN'}}
      return {kind: 'done', done: {action, status: 'ISSUES_FOUND', count: trailerInt(res.text, 'ISSUES_COUNT') ?? 0, filed: trailerInt(res.text, 'FINDINGS_FILED') ?? 0}}
    }
    case 'backfill': {
      const status = trailerValue(res.text, 'BACKFILL_STATUS', BACKFILL_STATUS)
      if (!status) return {kind: 'unreadable', message: 'backfill output missing BACKFILL_STATUS trailer'}
      if (!(BACKFILL_SUCCESS as readonly string[]).includes(status)) return {kind: 'unreadable', message: `backfill failed (BACKFILL_STATUS: ${status})`}
      const report = trailerValue(res.text, 'BACKFILL_REPORT')
      if (!report) return {kind: 'unreadable', message: 'backfill output missing BACKFILL_REPORT trailer'}
      return {kind: 'done', done: {action, status: status as BackfillStatus, report}}
    }
    case 'implementation':
    case 'alignment':
    case 'plan':
    case 'polish':
    case 'resolve':
      return {kind: 'done', done: {action}}
    default:
      return assertNever(action)
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected ${JSON.stringify(x)}`)
}
