import {appendFileSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import type {CycleOutcome, RunHistoryCycle, RunHistoryRecord} from '../../src/state/types.js'

const MIN = 60_000

/** A cycle `startMin`..`endMin` minutes before `now`. */
export function cycle(now: number, n: number, slot: number, bead: string, outcome: CycleOutcome, startMin: number, endMin: number, extra: Partial<RunHistoryCycle> = {}): RunHistoryCycle {
  const closes = outcome === 'COMPLETE'
  return {
    n,
    slot,
    bead,
    title: `Title of ${bead}`,
    outcome,
    reason: null,
    started_at: new Date(now - startMin * MIN).toISOString(),
    ended_at: new Date(now - endMin * MIN).toISOString(),
    duration_ms: (startMin - endMin) * MIN,
    tokens: 1000,
    cost_usd: 0.05,
    commits: closes ? [`${bead.replace(/[^a-f0-9]/g, 'a').padEnd(8, '0')}deadbeef0001`] : [],
    ...extra,
  }
}

export function run(now: number, startMin: number, endMin: number, cycles: RunHistoryCycle[], extra: Partial<RunHistoryRecord> = {}): RunHistoryRecord {
  return {
    v: 1,
    started_at: new Date(now - startMin * MIN).toISOString(),
    ended_at: new Date(now - endMin * MIN).toISOString(),
    flags: {},
    agent: 'codex',
    review_agent: 'claude',
    workers: Math.max(...cycles.map((c) => c.slot), 1),
    attempted: cycles.length,
    completed: cycles.filter((c) => c.outcome === 'COMPLETE').length,
    tokens: cycles.reduce((s, c) => s + c.tokens, 0),
    cost_usd: cycles.reduce((s, c) => s + c.cost_usd, 0),
    stop_reason: 'completed',
    exit_code: 0,
    paused_ms: 0,
    idle_ms: 0,
    cycles,
    blockers: [],
    log: null,
    ...extra,
  }
}

export function appendRuns(root: string, runs: Array<RunHistoryRecord | string>): string {
  const dir = path.join(root, '.helix-logs')
  mkdirSync(dir, {recursive: true})
  const file = path.join(dir, 'runs.jsonl')
  for (const r of runs) appendFileSync(file, (typeof r === 'string' ? r : JSON.stringify(r)) + '\n')
  return file
}

/**
 * The overnight fixture: an old run (2 days ago), a 2-worker run 5h..3h ago and a
 * 1-worker run 2h..1h ago with a blocker and a quota pause, and one torn line.
 * In the last 24h: 10 cycles (w1: 7, w2: 3), 4 closed beads, 6 failures, 1 blocked.
 */
export function overnight(root: string, now: number, titlePayload = ''): void {
  const old = run(now, 2900, 2880, [cycle(now, 1, 1, 'hx-old', 'COMPLETE', 2900, 2890)])
  const two = run(
    now,
    300,
    180,
    [
      cycle(now, 1, 1, 'hx-a1', 'COMPLETE', 300, 280, {tokens: 4000, cost_usd: 0.2}),
      cycle(now, 2, 1, 'hx-b2', 'FAILED', 279, 262, {reason: 'rc=1: npm test failed'}),
      cycle(now, 3, 1, 'hx-b2', 'COMPLETE', 260, 230, {title: `Title of hx-b2${titlePayload}`}),
      cycle(now, 4, 2, 'hx-c3', 'COMPLETE', 300, 250),
      cycle(now, 5, 2, 'hx-d4', 'TIMEOUT', 249, 220, {reason: 'timeout after 1800s'}),
      cycle(now, 6, 2, 'hx-e5', 'NOT_LANDED', 219, 185, {reason: 'conflict in a.ts'}),
    ],
    {paused_ms: 0, idle_ms: 5 * MIN, stop_reason: 'completed'},
  )
  const one = run(
    now,
    120,
    60,
    [
      cycle(now, 1, 1, 'hx-f6', 'COMPLETE', 120, 110),
      cycle(now, 2, 1, 'hx-g7', 'NOT_COMPLETED', 109, 100, {reason: 'bead still open'}),
      cycle(now, 3, 1, 'hx-g7', 'NOT_COMPLETED', 99, 90, {reason: 'bead still open'}),
      cycle(now, 4, 1, 'hx-g7', 'STALLED', 89, 80, {reason: 'no output for 600s'}),
    ],
    {paused_ms: 15 * MIN, idle_ms: 2 * MIN, stop_reason: 'blocked', blockers: [{id: 'hx-g7', title: 'Title of hx-g7', reason: 'failed 3 times', attempts: 3}]},
  )
  appendRuns(root, [old, two, '{"v":1,"started_at":"2026-', one])
}

/**
 * issue 20's morning: one run (05:00 → 06:00 ago-relative) with a command agent that
 * reports no cost, three workers, stopped by an error; a bead that failed twice then
 * closed on attempt 3; an epic closed with its last child (no cycle of its own); check and
 * review verdicts in the session log; a blocked bead, one waiting on it, one ready.
 */
export function morning(root: string, now: number): {log: string} {
  const iso = (min: number) => new Date(now - min * MIN).toISOString()
  const beads = [
    {id: 'hx-epic', title: 'The exporter', type: 'epic', status: 'closed', updated_at: iso(62)},
    {id: 'hx-a1', title: 'Parse the input', status: 'closed', parent: 'hx-epic', updated_at: iso(70)},
    {id: 'hx-b2', title: 'Write the output', status: 'closed', parent: 'hx-epic', updated_at: iso(62)},
    {id: 'hx-g7', title: 'Flaky network test', status: 'open', labels: ['blocked'], notes: `BLOCKED [${iso(65)}]: failed 3 times`},
    {id: 'hx-w8', title: 'Docs for the exporter', status: 'open', dependencies: [{issue_id: 'hx-w8', depends_on_id: 'hx-g7', type: 'blocks'}]},
    {id: 'hx-r9', title: 'Tidy the README', status: 'open', updated_at: iso(300)},
  ]
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), beads.map((b) => JSON.stringify(b)).join('\n') + '\n')
  const logDir = path.join(root, '.helix-logs')
  mkdirSync(logDir, {recursive: true})
  const log = path.join(logDir, 'helix-morning.log')
  const ev = (min: number, fields: Record<string, unknown>) => JSON.stringify({level: 30, time: now - min * MIN, ...fields})
  writeFileSync(
    log,
    [
      ev(119, {msg: 'run started'}),
      ev(69, {msg: 'review', bead: 'hx-a1', review_status: 'CLEAN', issues: 0}),
      ev(61, {msg: 'review', bead: 'hx-b2', review_status: 'ISSUES_FOUND', issues: 2}),
      ev(60.5, {msg: 'check', next_action: 'STOP'}),
    ].join('\n') + '\n',
  )
  const T: Record<string, string> = Object.fromEntries(beads.map((b) => [b.id, b.title]))
  const noCost = {cost_usd: 0, tokens: 0}
  const r = run(
    now,
    120,
    60,
    [
      cycle(now, 1, 1, 'hx-a1', 'COMPLETE', 118, 70, {...noCost, title: T['hx-a1']}),
      cycle(now, 2, 2, 'hx-b2', 'FAILED', 117, 110, {...noCost, title: T['hx-b2'], reason: 'rc=1: tests failed'}),
      cycle(now, 3, 3, 'hx-g7', 'NOT_COMPLETED', 116, 100, {...noCost, title: T['hx-g7'], reason: 'bead still open'}),
      cycle(now, 4, 2, 'hx-b2', 'FAILED', 109, 95, {...noCost, title: T['hx-b2'], reason: 'rc=1: tests failed'}),
      cycle(now, 5, 3, 'hx-g7', 'NOT_COMPLETED', 99, 85, {...noCost, title: T['hx-g7'], reason: 'bead still open'}),
      cycle(now, 6, 2, 'hx-b2', 'COMPLETE', 94, 62, {...noCost, title: T['hx-b2']}),
      cycle(now, 7, 3, 'hx-g7', 'NOT_COMPLETED', 84, 66, {...noCost, title: T['hx-g7'], reason: 'bead still open'}),
    ],
    {
      agent: './agent.sh',
      review_agent: './agent.sh',
      workers: 3,
      cost_usd: 0,
      tokens: 0,
      stop_reason: 'error',
      stop_message: 'review output missing REVIEW_STATUS trailer',
      exit_code: 1,
      log,
      blockers: [{id: 'hx-g7', title: 'Flaky network test', reason: 'failed 3 times', attempts: 3}],
    },
  )
  appendRuns(root, [r])
  return {log}
}
