import {describe, expect, it} from 'vitest'
import {effectiveRc, judgeAction, killedForTime, neverWorked, quotaOutlived} from '../../src/agents/judge.js'
import {PLAIN_VERDICT, type AgentVerdict, type DispatchEnd, type DispatchResult} from '../../src/agents/types.js'
import {runLoop} from '../../src/loop/orchestrator.js'
import {harness, opts} from '../loop/fakes.js'

function res(text: string, o: {rc?: number; end?: DispatchEnd; verdict?: Partial<AgentVerdict>} = {}): DispatchResult {
  return {rc: o.rc ?? 0, text, tokens: 1, durationMs: 1, logRange: null, argv: [], ...(o.end ?? {end: 'exited'}), verdict: {...PLAIN_VERDICT, ...o.verdict}}
}

describe('judgeAction: one judgement of an agent call (issue 19)', () => {
  it('an interrupt wins over everything, then the agent health, then how the process ended', () => {
    const quota = {health: {kind: 'quota' as const, resetAt: null, message: 'limit'}}
    expect(judgeAction('check', res('NEXT_ACTION: STOP', {end: {end: 'aborted'}, verdict: quota}))).toEqual({kind: 'interrupted'})
    expect(judgeAction('check', res('NEXT_ACTION: STOP', {end: {end: 'timeout', afterSec: 5}, verdict: quota}))).toMatchObject({kind: 'unhealthy'})
    expect(judgeAction('check', res('NEXT_ACTION: STOP', {rc: 124, end: {end: 'timeout', afterSec: 5}}))).toEqual({kind: 'timeout', afterSec: 5})
    expect(judgeAction('review', res('REVIEW_STATUS: CLEAN', {rc: 137, end: {end: 'stalled', afterSec: 9}}))).toEqual({kind: 'stalled', afterSec: 9})
    expect(judgeAction('polish', res('', {rc: 127, end: {end: 'spawn-failed', why: 'no /bin/sh'}}))).toEqual({kind: 'failed', rc: 127, message: 'polish failed (agent rc=127)'})
  })

  it('a decoded failure fails the call even when the agent exited 0 (the drain used to ignore it)', () => {
    const r = res('NEXT_ACTION: STOP', {verdict: {failed: true}})
    expect(effectiveRc(r)).toBe(1)
    expect(judgeAction('check', r)).toEqual({kind: 'failed', rc: 1, message: "check failed (the agent's output reports a failure)"})
    expect(judgeAction('plan', res('', {rc: 3}))).toEqual({kind: 'failed', rc: 3, message: 'design failed (agent rc=3)'})
  })

  it('reads each action’s trailers', () => {
    expect(judgeAction('check', res('x\nNEXT_ACTION: BUILD'))).toEqual({kind: 'done', done: {action: 'check', next: 'BUILD'}})
    expect(judgeAction('check', res('NEXT_ACTION: BUILDING'))).toEqual({kind: 'unreadable', message: 'unable to determine NEXT_ACTION from check output'})
    expect(judgeAction('review', res('REVIEW_STATUS: CLEAN'))).toEqual({kind: 'done', done: {action: 'review', status: 'CLEAN'}})
    expect(judgeAction('review', res('REVIEW_STATUS: ISSUES_FOUND\nISSUES_COUNT: 3\nFINDINGS_FILED: 2'))).toEqual({
      kind: 'done',
      done: {action: 'review', status: 'ISSUES_FOUND', count: 3, filed: 2},
    })
    expect(judgeAction('review', res('looks fine'))).toEqual({kind: 'unreadable', message: 'review output missing REVIEW_STATUS trailer'})
    expect(judgeAction('backfill', res('BACKFILL_STATUS: PARTIAL\nBACKFILL_REPORT: docs/r.md'))).toEqual({kind: 'done', done: {action: 'backfill', status: 'PARTIAL', report: 'docs/r.md'}})
    expect(judgeAction('backfill', res('BACKFILL_STATUS: FAILED\nBACKFILL_REPORT: docs/r.md'))).toEqual({kind: 'unreadable', message: 'backfill failed (BACKFILL_STATUS: FAILED)'})
    expect(judgeAction('backfill', res('BACKFILL_STATUS: COMPLETE'))).toEqual({kind: 'unreadable', message: 'backfill output missing BACKFILL_REPORT trailer'})
    expect(judgeAction('alignment', res(''))).toEqual({kind: 'done', done: {action: 'alignment'}})
  })

  it('timed out and stalled are read off the end once', () => {
    expect(killedForTime(res('', {end: {end: 'timeout', afterSec: 1}}))).toBe(true)
    expect(killedForTime(res('', {end: {end: 'stalled', afterSec: 1}}))).toBe(true)
    expect(killedForTime(res('', {end: {end: 'aborted'}}))).toBe(false)
    expect(killedForTime(res(''))).toBe(false)
  })
})

describe('the loop judges like the one-shot commands', () => {
  it('a check whose output reports a failure stops the drain, whatever its exit code and trailer', async () => {
    const h = harness([], {check: () => ({text: 'NEXT_ACTION: STOP', verdict: {failed: true}})})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(r.stopReason).toBe('error')
    expect(h.both).toContain('helix: check failed after queue drain')
  })

  it('a polish whose output reports a failure is a failed drain action', async () => {
    let checks = 0
    const h = harness([], {check: () => ({text: checks++ === 0 ? 'NEXT_ACTION: POLISH' : 'NEXT_ACTION: STOP'}), polish: () => ({verdict: {failed: true}})})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(h.both).toContain('helix: polish failed after queue drain')
  })
})

describe('how a call ended decides what its health signals mean (SPEC 14.1, 14.2)', () => {
  const quota = {kind: 'quota' as const, resetAt: null, message: 'limit'}
  it('a quota signal is outlived only by a call that exited 0 without a decoded failure', () => {
    const exited: DispatchEnd = {end: 'exited'}
    expect(quotaOutlived(exited, 0, {health: quota, failed: false})).toBe(true)
    expect(quotaOutlived(exited, 1, {health: quota, failed: false})).toBe(false)
    expect(quotaOutlived(exited, 0, {health: quota, failed: true})).toBe(false)
    expect(quotaOutlived({end: 'timeout', afterSec: 5}, 0, {health: quota, failed: false})).toBe(false)
    expect(quotaOutlived(exited, 0, {health: {kind: 'ok'}, failed: false})).toBe(false)
  })
  it('killed for time with only notices said: unavailable with the notice; silent, progressed or exited: no verdict', () => {
    const v = {health: {kind: 'ok' as const}, progressed: false, failureLine: '[codex] Reconnecting... waiting for network'}
    expect(neverWorked({end: 'stalled', afterSec: 9}, v)).toEqual({kind: 'unavailable', reason: 'stalled after 9s without starting work; its last notice: Reconnecting... waiting for network'})
    expect(neverWorked({end: 'timeout', afterSec: 60}, v)).toMatchObject({kind: 'unavailable', reason: expect.stringMatching(/^timed out after 60s /)})
    expect(neverWorked({end: 'stalled', afterSec: 9}, {...v, failureLine: null})).toBeNull()
    expect(neverWorked({end: 'stalled', afterSec: 9}, {...v, progressed: true})).toBeNull()
    expect(neverWorked({end: 'stalled', afterSec: 9}, {...v, progressed: undefined})).toBeNull()
    expect(neverWorked({end: 'exited'}, v)).toBeNull()
    expect(neverWorked({end: 'stalled', afterSec: 9}, {...v, failureLine: '[codex thread.started] thread=t1'})).toBeNull()
    expect(neverWorked({end: 'stalled', afterSec: 9}, {...v, failureLine: '[claude api_retry] attempt=3/10 error=unknown'})).toMatchObject({kind: 'unavailable'})
    expect(neverWorked({end: 'stalled', afterSec: 9}, {...v, health: quota})).toBeNull()
  })
})
