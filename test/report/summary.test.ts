import {rmSync} from 'node:fs'
import {execFileSync} from 'node:child_process'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {buildReport, parseHistory, parseSince, readHistory} from '../../src/report/summary.js'
import {renderReportHtml, esc} from '../../src/report/html.js'
import {cycle, run} from './helpers.js'
import {closedWithoutCycle, leftInTracker, needsYou} from '../../src/report/facts.js'
import {renderReportText} from '../../src/report/text.js'
import type {TrackerSnapshot} from '../../src/tracker/types.js'
import {makeTempDir} from '../support/tmp.js'

const NOW = new Date('2026-11-23T08:00:00Z')
const dirs: string[] = []
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, {recursive: true, force: true})
})

describe('parseSince', () => {
  it('durations and dates', () => {
    expect(parseSince('24h', NOW).toISOString()).toBe('2026-11-22T08:00:00.000Z')
    expect(parseSince('30m', NOW).toISOString()).toBe('2026-11-23T07:30:00.000Z')
    expect(parseSince('7d', NOW).toISOString()).toBe('2026-11-16T08:00:00.000Z')
    expect(parseSince('2w', NOW).toISOString()).toBe('2026-11-09T08:00:00.000Z')
    expect(parseSince('2026-11-22T18:00:00Z', NOW).toISOString()).toBe('2026-11-22T18:00:00.000Z')
    const local = parseSince('2026-11-22', NOW)
    expect([local.getFullYear(), local.getMonth(), local.getDate(), local.getHours()]).toEqual([2026, 10, 22, 0])
  })

  it('bad input is one line naming the value', () => {
    for (const bad of ['', 'yesterday', '24', 'h', '-1h', '1y', '2026-13-01', '2026-02-30', '22/11/2026', '2026-11-22 18:00']) {
      expect(() => parseSince(bad, NOW), bad).toThrow(/^invalid --since '.*': use a duration like 24h/)
    }
    expect(() => parseSince('2026-12-01', NOW)).toThrow("invalid --since '2026-12-01': it is in the future")
  })
})

describe('history', () => {
  it('keeps good lines, counts torn or foreign ones, fills missing fields', () => {
    const now = NOW.getTime()
    const good = run(now, 60, 30, [cycle(now, 1, 1, 'hx-a', 'COMPLETE', 60, 40)])
    const text = [JSON.stringify(good), '{"v":1,"started', '[1,2]', '{"no":"start"}', JSON.stringify({started_at: '2026-11-23T07:00:00Z', cycles: [{bead: 'hx-b', started_at: '2026-11-23T07:00:00Z', duration_ms: 60000}, {bead: 5}]}), ''].join('\n')
    const h = parseHistory(text)
    expect(h.skipped_lines).toEqual([2, 3, 4])
    expect(h.runs).toHaveLength(2)
    const sparse = h.runs[1]
    expect(sparse.ended_at).toBe('2026-11-23T07:01:00.000Z')
    expect(sparse.cycles).toHaveLength(1)
    expect(sparse.cycles[0]).toMatchObject({bead: 'hx-b', slot: 1, outcome: 'FAILED', tokens: 0, commits: [], ended_at: '2026-11-23T07:01:00.000Z'})
  })

  it('a missing file is an empty history; a FIFO is refused, never read', () => {
    const dir = makeTempDir('helix-hist-')
    dirs.push(dir)
    expect(readHistory(path.join(dir, 'runs.jsonl'))).toEqual({runs: [], skipped_lines: []})
    execFileSync('mkfifo', [path.join(dir, 'fifo')])
    expect(() => readHistory(path.join(dir, 'fifo'))).toThrow(/fifo is not a regular file/)
    expect(() => readHistory(dir)).toThrow(/is not a regular file/)
  })

  it('the window keeps runs that ended after since; beads add up across attempts', () => {
    const now = NOW.getTime()
    const h = {
      runs: [
        run(now, 3000, 2990, [cycle(now, 1, 1, 'hx-old', 'COMPLETE', 3000, 2995)]),
        run(now, 100, 10, [cycle(now, 1, 1, 'hx-a', 'FAILED', 100, 90, {reason: 'rc=1: x'}), cycle(now, 2, 1, 'hx-a', 'COMPLETE', 80, 60, {commits: ['c1', 'c2']})], {paused_ms: 1000, idle_ms: 2000}),
      ],
      skipped_lines: [],
    }
    const r = buildReport(h, parseSince('24h', NOW), NOW)
    expect(r.runs).toBe(1)
    expect(r.closed).toEqual([{id: 'hx-a', title: 'Title of hx-a', commits: ['c1', 'c2'], closed_at: new Date(now - 60 * 60_000).toISOString(), via: 'cycle'}])
    expect(r.failures).toMatchObject([{id: 'hx-a', outcome: 'FAILED', reason: 'rc=1: x'}])
    expect(r.beads).toMatchObject([{id: 'hx-a', attempts: 2, closed: true, tokens: 2000, cost_usd: 0.1, time_ms: 30 * 60_000}])
    expect(r.totals).toMatchObject({cycles: 2, closed: 1, failed: 1, tokens: 2000, paused_ms: 1000, idle_ms: 2000, run_ms: 90 * 60_000})
  })

  it('html: escapes untrusted text; an empty window renders without charts', () => {
    expect(esc('<a href="x">&\'\u001b[2J')).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&#39;?[2J')
    const html = renderReportHtml(buildReport({runs: [], skipped_lines: []}, parseSince('24h', NOW), NOW))
    expect(html).toContain('No cycles in this window.')
    expect(html).not.toContain('<rect class="bar')
  })
})

describe('a fleet host, an epic and what needs the operator (issue 29)', () => {
  const now = Date.parse('2026-11-24T08:00:00Z')
  const iso = (min: number) => new Date(now - min * 60_000).toISOString()
  const beads = [
    {id: 'ep', title: 'Epic', issue_type: 'epic', status: 'closed', closed_at: iso(30)},
    {id: 'c1', title: 'Child', status: 'closed', parent: 'ep', closed_at: iso(31)},
    // another host's plain task, closed in the same hours: not ours, and no epic
    {id: 'theirs', title: 'Their task', status: 'closed', closed_at: iso(40)},
    {id: 'stuck', title: 'Stuck', status: 'open', labels: ['blocked'], notes: `BLOCKED [${iso(50)}]: intractable after 4 attempts with exponential backoff; last: rc=1: tests fail`},
  ]
  const snap = {beads, byId: new Map(beads.map((b) => [b.id, b])), duplicateIds: []} as unknown as TrackerSnapshot
  const r = buildReport({runs: [run(now, 120, 20, [cycle(now, 1, 1, 'c1', 'COMPLETE', 60, 31), cycle(now, 2, 1, 'stuck', 'FAILED', 58, 50, {reason: 'rc=1: tests fail'})], {host: 'host-a'})], skipped_lines: []}, new Date(now - 86_400_000), new Date(now))

  it('only a parent of a bead these runs closed counts as closed with its children, on the host that closed the child', () => {
    expect(r.closed).toEqual([expect.objectContaining({id: 'c1', host: 'host-a', via: 'cycle'})])
    expect(closedWithoutCycle(snap, r)).toEqual([expect.objectContaining({id: 'ep', via: 'tracker', host: 'host-a'})])
  })

  it('the text opens with what needs the operator and names the host of each closed bead', () => {
    const full = {...r, left: leftInTracker(snap), closed: [...r.closed, ...closedWithoutCycle(snap, r)]}
    full.needs_you = needsYou(full)
    const text = renderReportText(full)
    expect(text.split('\n')[0]).toBe('1 bead needs you: stuck blocked: rc=1: tests fail')
    expect(text).toMatch(/^ {2}c1 {2}Title of c1 {2}\[[0-9a-f]+\] \(on host-a\)$/m)
    expect(text).toMatch(/^ {2}ep {2}Epic {2}\[closed with its children\] \(on host-a\)$/m)
    expect(text).not.toContain('theirs')
  })
})
