import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parseTracker} from '../../src/tracker/codec.js'
import {blockedBeads, childrenOf, hasChildren, readyBeads, statusCounts, statusOf, compareReady, depsClosed} from '../../src/tracker/queries.js'
import type {Bead} from '../../src/tracker/types.js'
import {REAL_HELIX, REAL_DDX} from './helpers.js'

function snap(beads: Bead[]) {
  return parseTracker(beads.map((b) => JSON.stringify(b)).join('\n') + '\n', 't')
}

describe('ready', () => {
  it('orders by priority, queue-rank (ranked first), created_at, id', () => {
    const s = snap([
      {id: 'e', priority: 2, created_at: '2026-01-01T00:00:00Z'},
      {id: 'd', priority: 2, created_at: '2025-01-01T00:00:00Z'},
      {id: 'c', priority: 2, 'queue-rank': 5, created_at: '2027-01-01T00:00:00Z'},
      {id: 'b', priority: 2, 'queue-rank': 1, created_at: '2027-01-01T00:00:00Z'},
      {id: 'a', priority: 3},
      {id: 'z', priority: 0, created_at: '2027-01-01T00:00:00Z'},
      {id: 'y', priority: 2, created_at: '2025-01-01T00:00:00Z'},
      {id: 'x'},
    ])
    // x has default priority 2 and no created_at → after the dated ones
    expect(readyBeads(s).map((b) => b.id)).toEqual(['z', 'b', 'c', 'd', 'y', 'e', 'x', 'a'])
    const sorted = [...s.beads].sort(compareReady).map((b) => b.id)
    expect(sorted).toEqual(['z', 'b', 'c', 'd', 'y', 'e', 'x', 'a'])
  })

  it('excludes non-open statuses, unmet and missing deps, superseded, execution-eligible false, epics with children', () => {
    const dep = (on: string) => [{issue_id: 'q', depends_on_id: on, type: 'blocks'}]
    const s = snap([
      {id: 'open1'},
      {id: 'nostatus-is-open', status: ''},
      {id: 'closed1', status: 'closed'},
      {id: 'ip', status: 'in_progress'},
      {id: 'def', status: 'deferred'},
      {id: 'prop', status: 'proposed'},
      {id: 'waits', dependencies: dep('open1')},
      {id: 'missing', dependencies: dep('ghost')},
      {id: 'fine', dependencies: dep('closed1')},
      {id: 'anytype', dependencies: [{issue_id: 'anytype', depends_on_id: 'open1', type: 'related'}]},
      {id: 'sup', 'superseded-by': 'open1'},
      {id: 'supblank', 'superseded-by': '  '},
      {id: 'inel', 'execution-eligible': false},
      {id: 'elstr', 'execution-eligible': 'false'},
      {id: 'epic', issue_type: 'epic'},
      {id: 'epic2', issue_type: 'epic'},
      {id: 'child', parent: 'epic2', status: 'closed'},
    ])
    expect(new Set(readyBeads(s).map((b) => b.id))).toEqual(new Set(['open1', 'nostatus-is-open', 'fine', 'supblank', 'elstr', 'epic']))
  })

  it('includes in_progress only when listed as stale', () => {
    const s = snap([{id: 'ip', status: 'in_progress'}, {id: 'ip2', status: 'in_progress'}])
    expect(readyBeads(s).map((b) => b.id)).toEqual([])
    expect(readyBeads(s, {staleClaims: new Set(['ip2'])}).map((b) => b.id)).toEqual(['ip2'])
  })

  it('runs on the real trackers', () => {
    for (const f of [REAL_HELIX, REAL_DDX]) {
      const s = parseTracker(readFileSync(f, 'utf8'), f)
      const r = readyBeads(s)
      for (const b of r) expect(statusOf(b)).toBe('open')
      const c = statusCounts(s, r.length)
      expect(c.total).toBe(s.beads.length)
    }
  })
})

describe('blocked, children, counts', () => {
  it('lists open beads with unmet or missing deps and status blocked beads, with what they wait on', () => {
    const s = snap([
      {id: 'a'},
      {id: 'b', status: 'closed'},
      {id: 'c', dependencies: [{issue_id: 'c', depends_on_id: 'a', type: 'blocks'}, {issue_id: 'c', depends_on_id: 'b', type: 'blocks'}, {issue_id: 'c', depends_on_id: 'zz', type: 'blocks'}]},
      {id: 'd', status: 'blocked'},
      {id: 'e', status: 'in_progress', dependencies: [{issue_id: 'e', depends_on_id: 'a', type: 'blocks'}]},
    ])
    expect(blockedBeads(s).map((x) => [x.bead.id, x.waitingOn])).toEqual([
      ['c', ['a', 'zz']],
      ['d', []],
    ])
    expect(depsClosed(s, s.byId.get('c')!)).toBe(false)
  })

  it('children and counts', () => {
    const s = snap([
      {id: 'ep', issue_type: 'epic'},
      {id: 'k1', parent: 'ep', status: 'closed'},
      {id: 'k2', parent: 'ep', status: 'in_progress'},
      {id: 'x', status: 'cancelled'},
      {id: 'y', status: 'proposed'},
      {id: 'w', status: 'deferred'},
      {id: 'bl', status: 'blocked'},
    ])
    expect(childrenOf(s, 'ep').map((b) => b.id)).toEqual(['k1', 'k2'])
    expect(hasChildren(s, 'k1')).toBe(false)
    expect(statusCounts(s, 0)).toEqual({total: 7, open: 1, in_progress: 1, closed: 1, blocked: 1, proposed: 1, cancelled: 1, ready: 0})
  })
})
