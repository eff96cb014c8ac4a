// A pause says when it ends in words that cannot be misread: a quota that resets at
// 03:00 tomorrow, or in three days (a weekly limit), must not read "resumes at 03:00"
// at 04:00 today. Today's stays `resumes at HH:MM` (SPEC 16.4, 14.3).
import {describe, expect, it} from 'vitest'
import {buildStatusModel, type TrackerCounts} from '../../src/operator/model.js'
import {renderStatusText, clockTime} from '../../src/operator/text.js'
import {emptyRunState} from '../../src/state/run-state.js'
import {snapshot} from './helpers.js'

// noon on the operator's clock, whatever the machine's time zone
const NOW = new Date(2026, 10, 25, 12, 0, 0)
const counts: TrackerCounts = {total: 0, open: 0, in_progress: 0, closed: 0, blocked: 0, proposed: 0, cancelled: 0, ready: 0}

function pausedLine(until: Date): string {
  const rs = {...emptyRunState(NOW), pid: 4242, phase: 'paused', paused_until: until.toISOString(), pause_reason: 'quota: weekly limit reached'}
  const m = buildStatusModel({snap: snapshot([]), counts, waiting: [], staleClaims: new Set(), runState: rs, livePid: {pid: 4242, started: NOW.toISOString()}, now: NOW})
  return renderStatusText(m)
    .split('\n')
    .find((l) => l.startsWith('  Paused: '))!
}

describe('status: when a pause ends', () => {
  it('today: the time; tomorrow: the time and "tomorrow"; later: the time and the day', () => {
    const today = new Date(2026, 10, 25, 15, 30)
    expect(pausedLine(today)).toBe(`  Paused: quota, resumes at ${clockTime(today.toISOString())}`)
    const tomorrow = new Date(2026, 10, 26, 11, 0)
    expect(pausedLine(tomorrow)).toBe('  Paused: quota, resumes at 11:00 tomorrow')
    const later = new Date(2026, 10, 28, 3, 0)
    expect(pausedLine(later)).toBe('  Paused: quota, resumes at 03:00 on Sat 28 Nov')
  })
})
