import {spawnSync} from 'node:child_process'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, helix, killQuietly, project, sleeper, waitFor} from './helpers.js'

const hasTmux = spawnSync('tmux', ['-V']).status === 0
const sessions: string[] = []
const kids: number[] = []
const dirs: string[] = []
afterEach(() => {
  while (sessions.length) spawnSync('tmux', ['kill-session', '-t', sessions.pop()!])
  while (kids.length) killQuietly(kids.pop())
  while (dirs.length) rmSync(dirs.pop()!, {recursive: true, force: true})
})

const ESC = '\u001b'
const BAD = `${ESC}]0;x\u0007${ESC}[2J\r\u0000\u202e` // OSC title, clear screen, CR, NUL, RTL override

function capture(name: string): string {
  return spawnSync('tmux', ['capture-pane', '-p', '-t', name], {encoding: 'utf8'}).stdout
}

/** A project with an active run: a live pid we spawned, its pid file, and run-state as the loop writes it. */
function activeRun(opts: {workers: number; paused?: boolean}) {
  const now = Date.now()
  const iso = (msAgo: number) => new Date(now - msAgo).toISOString()
  const root = project({
    beads: [
      {id: 'hx-w1', title: `Slot one bead${BAD}`, status: 'in_progress', owner: 'helix', 'claimed-at': iso(10_000)},
      {id: 'hx-w2', title: 'Slot two bead', status: 'in_progress', owner: 'helix', 'claimed-at': iso(10_000)},
      {id: 'hx-ready', title: 'Ready one', status: 'open'},
      {id: 'hx-lab', title: 'Labelled blocked', status: 'open', labels: ['blocked'], notes: 'BLOCKED [2026-11-23T01:00:00Z]: failed 3 times'},
      {id: 'hx-alice', title: 'Alice was here', status: 'in_progress', owner: 'alice', 'claimed-at': iso(7_200_000), 'claimed-pid': 999_999_99},
    ],
  })
  dirs.push(root)
  const s = sleeper()
  kids.push(s.pid!)
  const started = iso(3_725_000) // 1h 2m 5s ago
  writeFileSync(path.join(root, '.ddx', 'helix.pid'), `${s.pid} ${new Date(now).toISOString()}\n`)
  const workers = [
    {slot: 1, bead: 'hx-w1', title: `Slot one bead${BAD}`, attempt: 1, started_at: iso(754_000), worktree: null, branch: null, pid: s.pid, timeout_s: 2700, last_output: `editing src/a.ts${BAD}\nsecond line`},
    {slot: 2, bead: 'hx-w2', title: 'Slot two bead', attempt: 1, started_at: iso(30_000), worktree: '/x/.helix/worktrees/w2', branch: 'helix/w2', pid: s.pid, timeout_s: 2700, last_output: 'running tests'},
  ].slice(0, opts.workers)
  const rs = {
    pid: s.pid,
    started_at: started,
    updated_at: iso(1000),
    phase: opts.paused ? 'paused' : 'implementing',
    agent: 'codex',
    review_agent: 'claude',
    current_cycle: 5,
    attempted_cycles: 4,
    completed_cycles: 3,
    closed_beads: [],
    skipped: [],
    attempts: {},
    current_bead: 'hx-w1',
    current_bead_started_at: iso(754_000),
    focused_epic: null,
    total_tokens: 15018,
    total_cost_usd: 0.42,
    cycles: [
      {n: 1, bead: 'hx-1', outcome: 'COMPLETE', started_at: iso(3_000_000), ended_at: iso(2_760_000), duration_ms: 240_000, tokens: 5000, rc: 0},
      {n: 2, bead: 'hx-2', outcome: 'FAILED', started_at: iso(2_700_000), ended_at: iso(2_640_000), duration_ms: 60_000, tokens: 18, rc: 1},
      {n: 3, bead: 'hx-3', outcome: 'COMPLETE', started_at: iso(2_600_000), ended_at: iso(2_300_000), duration_ms: 300_000, tokens: 5000, rc: 0},
      {n: 4, bead: 'hx-4', outcome: 'COMPLETE', started_at: iso(2_000_000), ended_at: iso(1_820_000), duration_ms: 182_000, tokens: 5000, rc: 0},
    ],
    stop_reason: null,
    last_run: {started_at: iso(90_000_000), ended_at: iso(80_000_000), attempted_cycles: 9, completed_cycles: 9, total_tokens: 1, stop_reason: 'completed'},
    parallel_run_denied_count: 0,
    log: path.join(root, '.helix-logs', 'helix-20261123-030000.log'),
    max_cycles: 10,
    workers,
    last_output: opts.workers === 1 ? workers[0].last_output : null,
    ...(opts.paused ? {paused_until: new Date(now + 3_600_000).toISOString(), pause_reason: 'quota'} : {}),
  }
  writeFileSync(path.join(root, '.ddx', 'run-state.json'), JSON.stringify(rs))
  return {root, pid: s.pid!, pausedUntil: opts.paused ? new Date(now + 3_600_000) : null}
}

function hhmm(d: Date): string {
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`
}

describe.runIf(hasTmux)('helix status during a run, in a real 80×24 tmux pane', () => {
  async function inPane(root: string): Promise<string> {
    const name = `helix-progress-${process.pid}-${Date.now()}`
    sessions.push(name)
    const done = path.join(root, 'done')
    const cmd = `cd '${root}' && HELIX_ORPHAN_THRESHOLD=60 NODE_ENV=production '${process.execPath}' '${BIN}' status; echo $? > '${done}'; sleep 60`
    expect(spawnSync('tmux', ['new-session', '-d', '-s', name, '-x', '80', '-y', '24', cmd]).status).toBe(0)
    await waitFor(() => {
      try {
        return readFileSync(done, 'utf8').trim() !== ''
      } catch {
        return false
      }
    }, 15_000)
    expect(readFileSync(done, 'utf8').trim()).toBe('0')
    return capture(name)
  }

  it('two workers, paused: progress, time, pause, one row per slot with elapsed of timeout and last output; no Last Run', async () => {
    const {root, pausedUntil} = activeRun({workers: 2, paused: true})
    const screen = await inPane(root)
    const lines = screen.replace(/\n+$/, '').split('\n')
    expect(lines.length).toBeLessThanOrEqual(24)
    // the whole answer is on screen: the pane did not scroll (Tracker: is the first line)
    expect(lines[0]).toBe('Tracker:')
    expect(screen).toMatch(/^  Progress: 0\/5 beads closed, 5 left, ETA \d+m( \d+s)?; 15,018 tokens, \$0\.42$/m)
    expect(screen).toMatch(/^  Cycles: +3 completed of 4 attempted \(max 10\), mean 3m 16s, last 3m 2s$/m)
    expect(screen).toMatch(/^  Started: .*\(1h 2m ago\)$/m)
    expect(screen).toContain(`  Paused: quota, resumes at ${hhmm(pausedUntil!)}`)
    expect(screen).toMatch(/^  Cycle: +5 +\(paused\) +Workers: 2 busy$/m)
    expect(screen).toMatch(/^  w1 hx-w1 +12m 3\ds of 45m +Slot one bead\?\]0;x\?\?\[2J\?\?\?$/m)
    expect(screen).toMatch(/^ +» editing src\/a\.ts\?\]0;x\?\?\[2J\?\?\?⏎second line$/m)
    expect(screen).toMatch(/^  w2 hx-w2 +3\ds of 45m +Slot two bead$/m)
    expect(screen).toMatch(/^ +» running tests$/m)
    // 16.2: the labelled bead is blocked, not ready; 16.4: another owner's stale claim
    // (another owner's stale claim is ready again: SPEC 2.4)
    expect(screen).toMatch(/^  Ready: +2$/m)
    expect(screen).toMatch(/^  Blocked: +1 \(needs a human\), 0 waiting on dependencies$/m)
    expect(screen).toMatch(/^  hx-alice +Alice was here — claimed by alice \(stale\), pid 99999999, 2h ago$/m)
    // Last Run (the previous run) is hidden while a run is active
    expect(screen).not.toMatch(/Last Run/)
    for (const l of lines) expect(Array.from(l).length).toBeLessThanOrEqual(80)
  })

  it('one worker: the Agent row shows elapsed and the last output line; --json has progress, workers, last_output', async () => {
    const {root} = activeRun({workers: 1})
    const screen = await inPane(root)
    expect(screen.replace(/\n+$/, '').split('\n').length).toBeLessThanOrEqual(24)
    expect(screen).toMatch(/^  Cycle: +5 +Bead: hx-w1 \(claimed 1\ds ago\) Slot one bead/m)
    expect(screen).toMatch(/^  Agent: +12m 3\ds of 45m  » editing src\/a\.ts/m)
    expect(screen).not.toMatch(/Paused/)

    const j = JSON.parse(helix(root, ['status', '--json'], {HELIX_ORPHAN_THRESHOLD: '60'}).stdout)
    expect(j.progress).toMatchObject({completed: 3, attempted: 4, max_cycles: 10, tokens: 15018, cost_usd: 0.42, mean_cycle_s: 196})
    expect(j.progress.elapsed_s).toBeGreaterThanOrEqual(3725)
    expect(j.last_stop_reason).toBeNull()
    expect(j.paused_until).toBeNull()
    // --json is data: the raw string, not the terminal rendering
    expect(j.last_output).toBe(`editing src/a.ts${BAD}\nsecond line`)
    expect(j.workers).toHaveLength(1)
    expect(j.workers[0]).toMatchObject({slot: 1, bead: 'hx-w1', timeout_s: 2700})
  })
})

describe('helix status text never carries control characters', () => {
  it('ids, titles, notes, run-state fields (Last Run, stop reason) are sanitized', () => {
    const root = project({
      beads: [
        {id: `hx-x${BAD}`, title: `Title${BAD}\nnext`, status: 'open', labels: ['blocked'], notes: `BLOCKED [t]: why${BAD}`},
        {id: 'hx-y', title: `Claimed${BAD}`, status: 'in_progress', owner: `own${BAD}`, 'claimed-at': new Date().toISOString()},
      ],
    })
    dirs.push(root)
    writeFileSync(
      path.join(root, '.ddx', 'run-state.json'),
      JSON.stringify({pid: 1, started_at: '2026-11-22T01:00:00Z', updated_at: '2026-11-22T02:00:00Z', attempted_cycles: 1, completed_cycles: 0, total_tokens: 3, stop_reason: `error${BAD}\nx`, stop_message: `boom${BAD}`, phase: `p${BAD}`}),
    )
    const r = helix(root, ['status'])
    expect(r.code).toBe(0)
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    expect(r.stdout).toMatch(/^  Stopped: error\?\]0;x\?\?\[2J\?\?\?⏎x \(boom\?\]0;x\?\?\[2J\?\?\?\), /m)
    expect(r.stdout).toContain('hx-x?]0;x??[2J???')
    expect(r.stdout).toContain('Title?]0;x??[2J???⏎')
    // the BLOCKED note's reason, sanitized, in Parked
    expect(r.stdout).toMatch(/^  hx-x\?\]0;x\?\?\[2J\?\?\?  blocked: why\?\]0;x\?\?\[2J\?\?\? — /m)
    const b = helix(root, ['tracker', 'blocked', '--json'])
    expect(b.code).toBe(0)
    expect(JSON.parse(b.stdout).map((r: {id: string; blocked_reason?: string}) => [r.id, r.blocked_reason])).toEqual([[`hx-x${BAD}`, `why${BAD}`]])
  })
})
