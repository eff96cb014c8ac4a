// One project's part of the page, read from real files in a temp project: the run's
// beads and outcomes stay after it ended, blocked beads carry their reason, every
// attempt links to its own lines of the session log, and the night joins the history
// with the run that is not in it yet (one model for the report and the page).
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {ProjectReader} from '../../src/dashboard/project-view.js'
import {LogIndex} from '../../src/dashboard/log-files.js'
import {trackerText} from '../support/project.js'

const NOW = new Date('2026-11-27T03:00:00Z')
const T = (m: number) => new Date(NOW.getTime() - m * 60_000).toISOString()

/** a session log with two slots' implementations interleaved (as --workers 2 writes it) */
function sessionLog(): string {
  const rec = (o: Record<string, unknown>) => JSON.stringify({level: 30, time: 0, ...o})
  return [
    rec({msg: 'run start'}),
    rec({msg: 'dispatch', dispatch: 1, slot: 1, bead: 'hx-a', action: 'implementation', agent: 'codex'}),
    rec({msg: 'dispatch', dispatch: 2, slot: 2, bead: 'hx-b', action: 'implementation', agent: 'codex'}),
    rec({msg: 'working on a', stream: 'agent', dispatch: 1, slot: 1, bead: 'hx-a'}),
    rec({msg: 'working on b \u001b[31mred', stream: 'agent', dispatch: 2, slot: 2, bead: 'hx-b'}),
    rec({msg: 'dispatch end', dispatch: 1, slot: 1, bead: 'hx-a', rc: 0}),
    rec({msg: 'dispatch end', dispatch: 2, slot: 2, bead: 'hx-b', rc: 1}),
    rec({msg: 'dispatch', dispatch: 3, slot: 2, bead: 'hx-b', action: 'implementation', agent: 'codex'}),
    rec({msg: 'dispatch end', dispatch: 3, slot: 2, bead: 'hx-b', rc: 1}),
  ].join('\n') + '\n'
}

function project(): string {
  const root = path.join(makeTempDir('helix-dash-view-'), 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  mkdirSync(path.join(root, '.helix-logs'))
  writeFileSync(
    path.join(root, '.ddx', 'beads.jsonl'),
    trackerText([
      {id: 'hx-a', title: 'first', status: 'closed', updated_at: T(30)},
      {id: 'hx-b', title: 'second', labels: ['blocked'], notes: 'BLOCKED: blocked after 2 attempts; last: rc=1: tests fail', updated_at: T(20)},
      {id: 'hx-c', title: 'third', deps: ['hx-b'], dependencies: [{depends_on_id: 'hx-b', type: 'blocks'}]},
      {id: 'hx-d', title: 'fourth'},
    ]),
  )
  const log = path.join(root, '.helix-logs', 'helix-20261127-024000.log')
  writeFileSync(log, sessionLog())
  const cycle = (n: number, bead: string, title: string, outcome: string, reason: string | null, slot: number) => ({n, bead, title, outcome, reason, slot, started_at: T(40 - n), ended_at: T(35 - n), duration_ms: 300_000, tokens: 100, rc: outcome === 'COMPLETE' ? 0 : 1})
  const rs = {
    pid: 999_999,
    started_at: T(41),
    updated_at: T(10),
    phase: 'stopped',
    agent: 'codex',
    review_agent: null,
    current_cycle: 3,
    attempted_cycles: 3,
    completed_cycles: 1,
    closed_beads: ['hx-a'],
    skipped: [],
    attempts: {'hx-b': 2},
    current_bead: null,
    current_bead_started_at: null,
    focused_epic: null,
    total_tokens: 300,
    cycles: [cycle(1, 'hx-a', 'first', 'COMPLETE', null, 1), cycle(2, 'hx-b', 'second', 'FAILED', 'rc=1: tests fail', 2), cycle(3, 'hx-b', 'second', 'FAILED', 'rc=1: tests fail', 2)],
    stop_reason: 'blocked',
    last_run: null,
    parallel_run_denied_count: 0,
    log,
  }
  writeFileSync(path.join(root, '.ddx', 'run-state.json'), JSON.stringify(rs))
  // an earlier run of the night, in the history
  const earlier = {v: 1, started_at: T(120), ended_at: T(100), agent: 'codex', workers: 1, attempted: 1, completed: 1, tokens: 50, cycles: [{n: 1, slot: 1, bead: 'hx-z', title: 'older', outcome: 'COMPLETE', started_at: T(115), ended_at: T(105), duration_ms: 600_000, tokens: 50}], blockers: [], log: null}
  writeFileSync(path.join(root, '.helix-logs', 'runs.jsonl'), JSON.stringify(earlier) + '\n')
  return root
}

describe('dashboard project view', () => {
  it("keeps an ended run's beads with their outcomes and log ranges; queue, blocked reasons and events", async () => {
    const root = project()
    const {view, report} = await new ProjectReader(0, root, {}).read(NOW)
    expect(view.error).toBeNull()
    expect(view.run).toMatchObject({live: false, stop_reason: 'blocked', completed: 1, attempted: 3})
    expect(view.slots).toEqual([])
    const rows = Object.fromEntries(view.run_beads.map((r) => [r.bead, r]))
    expect(rows['hx-a']).toMatchObject({state: 'landed', attempts: 1, logs: [{file: 'helix-20261127-024000.log', from: 2, to: 6, slot: 1}]})
    // each attempt of hx-b links to its own dispatch (2: lines 3–7, 3: lines 8–9)
    expect(rows['hx-b']).toMatchObject({state: 'failed', attempts: 2, reason: 'rc=1: tests fail'})
    expect(rows['hx-b'].logs.map((l) => [l.from, l.to])).toEqual([
      [3, 7],
      [8, 9],
    ])
    const q = view.queue!
    expect(q.blocked).toEqual([{id: 'hx-b', title: 'second', reason: 'blocked: blocked after 2 attempts; last: rc=1: tests fail'}])
    expect(q.waiting.map((w) => [w.id, w.on])).toEqual([['hx-c', ['hx-b']]])
    expect(q.ready.map((b) => b.id)).toEqual(['hx-d'])
    expect(q.counts).toMatchObject({total: 4, closed: 1})
    const kinds = view.events.map((e) => `${e.kind} ${e.bead}`)
    expect(kinds).toContain('blocked hx-b')
    expect(kinds).toContain('completed hx-a')
    expect(kinds.filter((k) => k === 'failed hx-b')).toHaveLength(2)
    expect(view.events.find((e) => e.kind === 'failed')).toMatchObject({outcome: 'FAILED', text: 'rc=1: tests fail'})
    expect(view.events.find((e) => e.kind === 'blocked')!.text).toBe('blocked after 2 attempts; last: rc=1: tests fail')
    // one model of the night: the history's run and the run-state's run together, as the report counts them
    expect(report!.runs).toBe(2)
    expect(report!.totals.cycles).toBe(4)
    expect(view.night).toMatchObject({runs: 2, cycles: 4, closed: 2, failed: 2})
  })

  it('the log index reads only what was appended since the last refresh', () => {
    const dir = makeTempDir('helix-dash-log-')
    const file = path.join(dir, 'helix-1.log')
    const text = sessionLog()
    const cut = text.indexOf('\n', text.indexOf('working on a')) + 20 // mid-line
    writeFileSync(file, text.slice(0, cut))
    const idx = new LogIndex(dir, 'helix-1.log')
    idx.refresh()
    expect(idx.spans.get(1)).toMatchObject({first: 2, last: 4, ended: false})
    writeFileSync(file, text)
    idx.refresh()
    expect(idx.spans.get(1)).toMatchObject({first: 2, last: 6, ended: true})
    expect(idx.implementations().map((s) => s.dispatch)).toEqual([1, 2, 3])
  })
})
