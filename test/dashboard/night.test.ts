// The page's night with --remote (SPEC 22.2): the fleet's records joined with this
// checkout's own history, a run found in both counted once.
import {describe, expect, it} from 'vitest'
import {nightReport, withFleetRuns} from '../../src/dashboard/night.js'
import {parseHistory} from '../../src/report/summary.js'

const now = new Date('2026-11-27T06:00:00Z')
const rec = (host: string | null, started: string, bead: string) =>
  JSON.stringify({v: 1, ...(host ? {host} : {}), started_at: started, ended_at: started, cycles: [{n: 1, slot: 1, bead, title: bead, outcome: 'COMPLETE', started_at: started, ended_at: started, duration_ms: 1000}]})

describe('withFleetRuns', () => {
  it('adds the local runs the fleet lacks (not pushed yet, or not a --remote run) and counts a run in both once', () => {
    const local = parseHistory([rec('host-a', '2026-11-27T01:00:00Z', 'hx-1'), rec('host-a', '2026-11-27T05:00:00Z', 'hx-3'), rec(null, '2026-11-27T04:00:00Z', 'hx-9')].join('\n'))
    const fleet = parseHistory([rec('host-a', '2026-11-27T01:00:00Z', 'hx-1'), rec('host-b', '2026-11-27T02:00:00Z', 'hx-2')].join('\n'))
    const joined = withFleetRuns(local, fleet)
    expect(joined.runs.map((r) => `${r.host ?? '-'} ${r.cycles[0]?.bead}`).sort()).toEqual(['- hx-9', 'host-a hx-1', 'host-a hx-3', 'host-b hx-2'])
    expect(withFleetRuns(local, null)).toBe(local)
    const r = nightReport(local, null, now, fleet)
    expect(r.runs).toBe(4)
    expect(r.closed.map((c) => [c.id, c.host ?? null])).toEqual([
      ['hx-1', 'host-a'],
      ['hx-2', 'host-b'],
      ['hx-9', null],
      ['hx-3', 'host-a'],
    ])
  })
})
