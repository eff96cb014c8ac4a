import {describe, expect, it} from 'vitest'
import {codexResetAt, describeReset, healthStopLine, parseClockTime, parseDuration, quotaValueResetAt, shortDuration, unixToIso, worseHealth} from '../../src/agents/self-report.js'
import {codexDecoder} from '../../src/agents/output.js'

// The reset-time readers behind SPEC 14.1/14.3 (pure functions).

const NOW = new Date(2026, 10, 23, 14, 0, 0) // local 14:00

describe('durations and clock times', () => {
  it('reads durations unit by unit and stops at the first non-duration word', () => {
    expect(parseDuration('2s')).toBe(2)
    expect(parseDuration('90 seconds.')).toBe(90)
    expect(parseDuration('1h30m')).toBe(5400)
    expect(parseDuration('4 days 20 hours 9 minutes.')).toBe(4 * 86400 + 20 * 3600 + 9 * 60)
    expect(parseDuration('1 hour and 5 minutes')).toBe(3900)
    expect(parseDuration('5 min, then upgrade')).toBe(300)
    expect(parseDuration('later')).toBeUndefined()
    expect(parseDuration('3 apples')).toBeUndefined()
  })

  it('reads 12 h and 24 h clock times as today, or tomorrow once past', () => {
    expect(parseClockTime('3:10 PM.', NOW)).toEqual(new Date(2026, 10, 23, 15, 10))
    expect(parseClockTime('12:05 AM', NOW)).toEqual(new Date(2026, 10, 24, 0, 5))
    expect(parseClockTime('13:59', NOW)).toEqual(new Date(2026, 10, 24, 13, 59))
    expect(parseClockTime('14:00:30', NOW)).toEqual(new Date(2026, 10, 23, 14, 0, 30))
    expect(parseClockTime('Dec 29th, 2025 10:15 PM', NOW)).toEqual(new Date(2025, 11, 29, 22, 15))
    expect(parseClockTime('2026-11-24T03:10:00Z', NOW)?.toISOString()).toBe('2026-11-24T03:10:00.000Z')
    expect(parseClockTime('25:00', NOW)).toBeUndefined()
    expect(parseClockTime('soon', NOW)).toBeUndefined()
  })

  it('codex messages: at / in / API body fields / none', () => {
    expect(codexResetAt("You've hit your usage limit. Try again at 3:10 PM.", NOW)).toBe(new Date(2026, 10, 23, 15, 10).toISOString())
    expect(codexResetAt('try again in 2s', NOW)).toBe(new Date(NOW.getTime() + 2000).toISOString())
    expect(codexResetAt('{"error":{"type":"usage_limit_reached","resets_in_seconds":600}}', NOW)).toBe(new Date(NOW.getTime() + 600_000).toISOString())
    expect(codexResetAt('{"type":"usage_limit_reached","resets_at":1795460000}', NOW)).toBe(new Date(1795460000 * 1000).toISOString())
    expect(codexResetAt("You've hit your usage limit. Try again later.", NOW)).toBeNull()
  })

  it('command agent QUOTA values and unix seconds', () => {
    expect(quotaValueResetAt('120', NOW)).toBe(new Date(NOW.getTime() + 120_000).toISOString())
    expect(quotaValueResetAt('2026-11-23T15:00:00+01:00', NOW)).toBe('2026-11-23T14:00:00.000Z')
    expect(quotaValueResetAt('1h', NOW)).toBe(new Date(NOW.getTime() + 3_600_000).toISOString())
    expect(quotaValueResetAt('', NOW)).toBeNull()
    expect(quotaValueResetAt('whenever', NOW)).toBeNull()
    expect(unixToIso(1795460000)).toBe('2026-11-23T18:53:20.000Z')
    expect(unixToIso(1795460000123)).toBe('2026-11-23T18:53:20.123Z')
    expect(unixToIso('x')).toBeNull()
    expect(unixToIso(-5)).toBeNull()
  })
})

describe('messages', () => {
  it('describes a reset for people and builds the one-shot stop lines', () => {
    expect(shortDuration(40_000)).toBe('40s')
    expect(shortDuration(102 * 60_000)).toBe('1h42m')
    expect(shortDuration(26 * 3600_000)).toBe('1d2h')
    expect(describeReset(new Date(2026, 10, 23, 15, 42).toISOString(), NOW)).toBe('15:42 (in 1h42m)')
    expect(describeReset(new Date(2026, 10, 29, 22, 15).toISOString(), NOW)).toBe('2026-11-29 22:15 (in 6d8h)')
    expect(healthStopLine('claude', {kind: 'unavailable', reason: 'Not logged in · Please run /login'}, NOW)).toBe('helix: agent claude unavailable: Not logged in · Please run /login')
    expect(healthStopLine('codex', {kind: 'quota', resetAt: null, message: ''}, NOW)).toBe('helix: codex quota exhausted; no reset time given, try again later')
  })

  it('unavailable beats quota beats ok', () => {
    const q = {kind: 'quota', resetAt: null, message: 'q'} as const
    const u = {kind: 'unavailable', reason: 'u'} as const
    expect(worseHealth({kind: 'ok'}, q)).toBe(q)
    expect(worseHealth(q, u)).toBe(u)
    expect(worseHealth(u, q)).toBe(u)
  })

  it('an older codex retry notice (`retrying 1/5 in 201ms`) is not progress and not a failure', () => {
    const dec = codexDecoder({now: () => NOW})
    const d = dec.push(JSON.stringify({type: 'error', message: 'stream error: stream disconnected; retrying 1/5 in 201ms…'}))
    expect(d.progress).toBe(false)
    expect(dec.verdict!().failed).toBe(false)
  })
})
