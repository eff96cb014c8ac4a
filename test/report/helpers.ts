import {appendFileSync, mkdirSync} from 'node:fs'
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
