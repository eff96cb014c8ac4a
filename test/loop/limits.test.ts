import {describe, expect, it} from 'vitest'
import {parseRunLimits} from '../../src/cli/run-limits.js'

describe('run limits (flags and env)', () => {
  it('defaults', () => {
    expect(parseRunLimits({}, {})).toEqual({workers: 1, land: 'ff', stallTimeoutSec: 900, landCheckTimeoutSec: 1800, resolveAttempts: 2, maxQuotaWaitSec: 21600})
  })
  it('flags win over env; env fills the rest', () => {
    const l = parseRunLimits({workers: '3', 'max-cost': '2.50'}, {HELIX_WORKERS: '9', HELIX_STALL_TIMEOUT: '0', HELIX_MAX_TOKENS: '1000', HELIX_NOTIFY: 'notify-send  -u low'})
    expect(l).toEqual({workers: 3, land: 'ff', stallTimeoutSec: 0, landCheckTimeoutSec: 1800, resolveAttempts: 2, maxTokens: 1000, maxCost: 2.5, maxQuotaWaitSec: 21600, notify: ['notify-send', '-u', 'low']})
  })
  it.each([
    [{'stall-timeout': '-1'}, "invalid --stall-timeout '-1'"],
    [{'max-tokens': 'abc'}, "invalid --max-tokens 'abc'"],
    [{'max-quota-wait': '0x'}, "invalid --max-quota-wait '0x'"],
    [{workers: '0'}, "invalid --workers '0': expected a whole number from 1 to 32"],
    [{workers: '33'}, "invalid --workers '33'"],
    [{'max-cost': '-5'}, "invalid --max-cost '-5'"],
    [{land: 'rebase'}, "invalid --land 'rebase'"],
  ])('%j is bad input naming the flag', (flags, msg) => {
    expect(() => parseRunLimits(flags, {})).toThrow(msg)
    try {
      parseRunLimits(flags, {})
    } catch (error) {
      expect((error as {exitCode: number}).exitCode).toBe(1)
    }
  })
  it('a bad environment value names the variable', () => {
    expect(() => parseRunLimits({}, {HELIX_WORKERS: 'many'})).toThrow("invalid HELIX_WORKERS 'many'")
  })
  it('the variables read deep in the tracker and loop are checked too, not silently defaulted', () => {
    expect(() => parseRunLimits({}, {HELIX_BACKOFF_SLEEP: '5s'})).toThrow("invalid HELIX_BACKOFF_SLEEP '5s': expected seconds, a number ≥ 0")
    expect(() => parseRunLimits({}, {HELIX_LOCK_TIMEOUT: '-1'})).toThrow("invalid HELIX_LOCK_TIMEOUT '-1'")
    expect(() => parseRunLimits({}, {HELIX_ORPHAN_THRESHOLD: '2h'})).toThrow("invalid HELIX_ORPHAN_THRESHOLD '2h'")
    expect(() => parseRunLimits({}, {HELIX_SANDBOX: 'maybe'})).toThrow("invalid HELIX_SANDBOX 'maybe': expected 1 or 0 (or true/false, yes/no, on/off)")
    expect(() => parseRunLimits({}, {HELIX_AUTO_ALIGN: 'sometimes'})).toThrow("invalid HELIX_AUTO_ALIGN 'sometimes'")
    expect(() => parseRunLimits({}, {HELIX_BACKOFF_SLEEP: '0.5', HELIX_LOCK_TIMEOUT: '30', HELIX_ORPHAN_THRESHOLD: '', HELIX_SANDBOX: 'Off', HELIX_AUTO_ALIGN: 'true'})).not.toThrow()
  })
})
