import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {BIN, project, waitFor} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

const hasTmux = spawnSync('tmux', ['-V']).status === 0
const sessions: string[] = []
afterEach(() => {
  while (sessions.length) spawnSync('tmux', ['kill-session', '-t', sessions.pop()!])
})

function capture(name: string): string {
  return spawnSync('tmux', ['capture-pane', '-p', '-t', name], {encoding: 'utf8'}).stdout
}

describe.runIf(hasTmux)('helix status --watch in an 80×24 tmux pane', () => {
  it('draws one screen, redraws with new tracker state, exits 0 on Ctrl-C', async () => {
    const root = project({beads: [{id: 'hx-one', title: 'First bead', status: 'open'}]})
    const name = `helix-watch-${process.pid}-${Date.now()}`
    sessions.push(name)
    const rcFile = path.join(root, 'rc')
    const cmd = `cd '${root}' && NODE_ENV=production '${process.execPath}' '${BIN}' status --watch 1; echo $? > '${rcFile}'; sleep 30`
    const r = spawnSync('tmux', ['new-session', '-d', '-s', name, '-x', '80', '-y', '24', cmd])
    expect(r.status).toBe(0)
    await waitFor(() => /Ready: +1/.test(capture(name)), 15_000)
    let screen = capture(name)
    expect(screen).toMatch(/helix status — every 1s/)
    expect(screen).toMatch(/^Tracker:/m)
    expect(screen).toMatch(/^  Total: +1/m)
    expect(screen).toMatch(/^Active Run: none/m)
    expect(screen.split('\n').length).toBeLessThanOrEqual(25)

    // the tracker changes: the next frame shows it, in place (one Tracker: header on screen)
    writeFileSync(
      path.join(root, '.ddx', 'beads.jsonl'),
      [{id: 'hx-one', title: 'First bead', status: 'closed'}, {id: 'hx-two', title: 'Second', status: 'open'}, {id: 'hx-three', title: 'Third', status: 'open'}]
        .map((b) => JSON.stringify(b))
        .join('\n') + '\n',
    )
    await waitFor(() => /Total: +3/.test(capture(name)), 15_000)
    screen = capture(name)
    expect(screen).toMatch(/Ready: +2/)
    expect(screen.match(/^Tracker:/gm)).toHaveLength(1)

    spawnSync('tmux', ['send-keys', '-t', name, 'C-c'])
    await waitFor(() => {
      try {
        return readFileSync(rcFile, 'utf8').trim() !== ''
      } catch {
        return false
      }
    }, 10_000)
    expect(readFileSync(rcFile, 'utf8').trim()).toBe('0')
  })
})

describe.runIf(hasTmux)('helix start from a tmux pane', () => {
  it('the run survives the pane being killed (terminal hangup)', async () => {
    const {existsSync, readFileSync: rf, writeFileSync: wf} = await import('node:fs')
    const {pidAlive} = await import('../../src/state/pidfile.js')
    const {REPO, killQuietly} = await import('./helpers.js')
    const root = project({beads: [{id: 'hx-aaaa0001', title: 'Hang here', status: 'open'}]})
    spawnSync('git', ['init', '-q'], {cwd: root})
    const binDir = path.join(root, 'stubbin')
    const stubDir = makeTempDir('helix-ops-stub-')
    const {installStubs} = await import(path.join(REPO, 'fixtures', 'agents', 'install-stubs.mjs'))
    installStubs(binDir)
    wf(path.join(stubDir, 'script.json'), JSON.stringify({implementation: {default: ['hang']}}))
    const name = `helix-start-${process.pid}-${Date.now()}`
    sessions.push(name)
    const cmd = `cd '${root}' && PATH='${binDir}':"$PATH" HELIX_STUB_DIR='${stubDir}' NODE_ENV=production '${process.execPath}' '${BIN}' start --codex; sleep 60`
    expect(spawnSync('tmux', ['new-session', '-d', '-s', name, '-x', '80', '-y', '24', cmd]).status).toBe(0)
    await waitFor(() => /helix: started \(pid=\d+/.test(capture(name)), 20_000)
    const pid = Number(/pid=(\d+)/.exec(capture(name))![1])
    try {
      await waitFor(() => existsSync(path.join(stubDir, 'calls.jsonl')), 20_000)
      const panePid = Number(spawnSync('tmux', ['display-message', '-p', '-t', name, '#{pane_pid}'], {encoding: 'utf8'}).stdout.trim())
      expect(panePid).toBeGreaterThan(0)
      spawnSync('tmux', ['kill-session', '-t', name])
      sessions.pop()
      // the hangup has been delivered once the pane's shell is gone; the run must outlive it
      await waitFor(() => !pidAlive(panePid), 10_000)
      expect(pidAlive(pid)).toBe(true)
      expect(rf(path.join(root, '.ddx', 'helix.pid'), 'utf8').startsWith(`${pid} `)).toBe(true)
    } finally {
      try {
        process.kill(pid, 'SIGTERM')
      } catch {
        // gone
      }
      await waitFor(() => !pidAlive(pid), 20_000).catch(() => undefined) // then SIGKILL below
      killQuietly(pid)
    }
  })
})

/** A project with an active run (a live sleeper holds the pid file) mid-way: 2 of 7 closed, one waiting, one blocked, one backing off. */
async function midRun(): Promise<string> {
  const {sleeper} = await import('./helpers.js')
  const now = Date.now()
  const iso = (ms: number) => new Date(ms).toISOString()
  const root = project({
    beads: [
      {id: 'hx-epic0001', title: 'Epic: the exporter', type: 'epic', status: 'open'},
      {id: 'hx-aaaa0001', title: 'Parse the config file', status: 'closed'},
      {id: 'hx-aaaa0002', title: 'Add a --json flag to export, with a title long enough to be cut', status: 'in_progress', owner: 'helix', 'claimed-at': iso(now - 120_000)},
      {id: 'hx-aaaa0003', title: 'Write the docs', status: 'open', dependencies: [{issue_id: 'hx-aaaa0003', depends_on_id: 'hx-aaaa0002', type: 'blocks'}]},
      {id: 'hx-aaaa0004', title: 'Flaky thing', status: 'open', labels: ['blocked'], notes: 'BLOCKED [2026-11-24T04:00:00Z]: 3 failed attempts'},
      {id: 'hx-aaaa0005', title: 'Retry me', status: 'open'},
      {id: 'hx-aaaa0006', title: 'Done too', status: 'closed'},
    ],
  })
  const s = sleeper()
  writeFileSync(path.join(root, '.ddx', 'helix.pid'), `${s.pid} ${iso(now)}\n`)
  writeFileSync(
    path.join(root, '.ddx', 'run-state.json'),
    JSON.stringify({
      pid: s.pid,
      started_at: iso(now - 3_600_000),
      updated_at: iso(now),
      phase: 'implementing',
      current_cycle: 4,
      attempted_cycles: 3,
      completed_cycles: 2,
      total_tokens: 12300,
      log: path.join(root, '.helix-logs', 'helix-20261124-050000.log'),
      current_bead: 'hx-aaaa0002',
      current_bead_started_at: iso(now - 120_000),
      backoff_until: {'hx-aaaa0005': iso(now + 600_000)},
      attempts: {'hx-aaaa0005': 1},
      cycles: [
        {n: 1, bead: 'hx-aaaa0001', outcome: 'COMPLETE', duration_ms: 600_000},
        {n: 2, bead: 'hx-aaaa0005', outcome: 'FAILED', duration_ms: 300_000},
        {n: 3, bead: 'hx-aaaa0006', outcome: 'COMPLETE', duration_ms: 900_000},
      ],
      workers: [{slot: 1, bead: 'hx-aaaa0002', started_at: iso(now - 120_000), timeout_s: 2700, last_output: 'running npm test'}],
    }),
  )
  return root
}

async function watchIn(root: string, cols: number, rows: number, ready: RegExp): Promise<string> {
  const name = `helix-watch-${cols}-${process.pid}-${Date.now()}`
  sessions.push(name)
  const cmd = `cd '${root}' && NODE_ENV=production '${process.execPath}' '${BIN}' status --watch 1; sleep 30`
  expect(spawnSync('tmux', ['new-session', '-d', '-s', name, '-x', String(cols), '-y', String(rows), cmd]).status).toBe(0)
  await waitFor(() => ready.test(capture(name)), {timeoutMs: 20_000, what: `status screen matching ${ready}`})
  return capture(name)
}

describe.runIf(hasTmux)('helix status --watch during a run, in real tmux panes (issue 20)', () => {
  it('39×24 (tmux split-window -h of 80 columns): the compact layout, nothing wraps, header stays', async () => {
    const screen = await watchIn(await midRun(), 39, 24, /Beads: /)
    const lines = screen.replace(/\n+$/, '').split('\n')
    expect(lines[0]).toMatch(/^helix status · 1s · \d\d:\d\d:\d\d$/)
    expect(lines.length).toBeLessThanOrEqual(24)
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(39)
    expect(screen).toMatch(/^Beads: 2\/7 closed, 5 left$/m)
    expect(screen).toMatch(/^Ready 2 · Blocked 1 · Waiting 1$/m)
    expect(screen).toMatch(/^Cycle 4 · ETA 40m$/m)
    expect(screen).toMatch(/^Cycles: 2 completed of 3 attempted$/m)
    expect(screen).toMatch(/^12,300 tokens, mean 10m$/m)
    expect(screen).toMatch(/^ {2}hx-aaaa0005 retry in \d+m/m)
    expect(screen).toMatch(/^ {2}hx-aaaa0004 blocked: 3 failed att/m)
    expect(screen).toMatch(/^ {2}» running npm test$/m)
    // a wrapped line would show up as a line that begins mid-word of the one above; the title is cut with …
    expect(screen).toMatch(/^ {2}Add a --json flag to export, with a ?…$/m)
  }, 40_000)

  it('80×24: progress in beads with ETA, cycles apart, waiting apart from blocked, backoff relative', async () => {
    const screen = await watchIn(await midRun(), 80, 24, /Progress: /)
    const lines = screen.replace(/\n+$/, '').split('\n')
    expect(lines.length).toBeLessThanOrEqual(24)
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80)
    expect(screen).toMatch(/^ {2}Progress: 2\/7 beads closed, 5 left, ETA 40m; 12,300 tokens$/m)
    expect(screen).toMatch(/^ {2}Cycles: {2}2 completed of 3 attempted, mean 10m, last 15m$/m)
    expect(screen).toMatch(/^ {2}Started: .*\(1h( \d+s)? ago\)$/m)
    expect(screen).toMatch(/^ {2}Blocked: +1 \(needs a human\), 1 waiting on dependencies$/m)
    expect(screen).toMatch(/hx-aaaa0005 {2}backoff after 1 failed attempt in \d+m/)
  }, 40_000)
})
