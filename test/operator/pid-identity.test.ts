import {describe, expect, it} from 'vitest'
import {pidMatchesRecord, processStartMs} from '../../src/status/pid-identity.js'

describe('pid identity', () => {
  it('knows when this process started (Linux /proc)', () => {
    const start = processStartMs(process.pid)
    expect(start).not.toBeNull()
    const expected = Date.now() - process.uptime() * 1000
    expect(Math.abs(start! - expected)).toBeLessThan(5_000)
  })

  it('a record written after the process started matches; one from long before does not', () => {
    expect(pidMatchesRecord(process.pid, new Date().toISOString())).toBe(true)
    expect(pidMatchesRecord(process.pid, '2020-01-01T00:00:00Z')).toBe(false)
    expect(pidMatchesRecord(process.pid, 'not a time')).toBe(true)
    expect(pidMatchesRecord(999_999_999, '2020-01-01T00:00:00Z')).toBe(true) // unknown: trust kill(0)
  })
})
