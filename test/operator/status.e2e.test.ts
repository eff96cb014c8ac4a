import {existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {once} from 'node:events'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {helix, killQuietly, project, REAL_HELIX, sleeper} from './helpers.js'

const kids: number[] = []
afterEach(() => {
  while (kids.length) killQuietly(kids.pop())
})

/** Our own ready count of the real tracker, straight from SPEC 2.3 (no helix code). */
function ownReadyCount(file: string): number {
  const beads = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
  const byId = new Map(beads.map((b: any) => [b.id, b]))
  const parents = new Set(beads.map((b: any) => b.parent).filter(Boolean))
  return beads.filter(
    (b: any) =>
      (b.status ?? 'open') === 'open' &&
      (b.dependencies ?? []).every((d: any) => (byId.get(d.depends_on_id) as any)?.status === 'closed') &&
      !String(b['superseded-by'] ?? '').trim() &&
      b['execution-eligible'] !== false &&
      !(b.issue_type === 'epic' && parents.has(b.id)),
  ).length
}

describe('helix status (built CLI)', () => {
  it('text on a copy of the real 966-bead tracker: counts, Ready = 1, no log file, tracker untouched', () => {
    expect(ownReadyCount(REAL_HELIX)).toBe(1)
    const root = project({copy: REAL_HELIX})
    const before = readFileSync(path.join(root, '.ddx', 'beads.jsonl'))
    const r = helix(root, ['status'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^Tracker:$/m)
    expect(r.stdout).toMatch(/^  Total: +966$/m)
    expect(r.stdout).toMatch(/^  Ready: +1$/m)
    expect(r.stdout).toMatch(/^  Closed: +927$/m)
    expect(r.stdout).toMatch(/^Active Run: none$/m)
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines.length).toBeLessThanOrEqual(24)
    for (const l of lines) expect(Array.from(l).length).toBeLessThanOrEqual(80)
    expect(existsSync(path.join(root, '.helix-logs'))).toBe(false)
    expect(readFileSync(path.join(root, '.ddx', 'beads.jsonl')).equals(before)).toBe(true)
    expect(readdirSync(path.join(root, '.ddx')).sort()).toEqual(['beads.jsonl'])
  })

  it('--json before any run has the SPEC 7.1 shape', () => {
    const root = project({copy: REAL_HELIX})
    const r = helix(root, ['status', '--json'])
    expect(r.code).toBe(0)
    const j = JSON.parse(r.stdout)
    expect(j).toEqual({
      current_cycle: null,
      running_bead: null,
      parked_beads: [],
      injected_supervisory: [],
      last_stop_reason: null,
      tracker: {total: 966, open: 2, in_progress: 0, closed: 927, blocked: 0, proposed: 0, cancelled: 36, ready: 1},
      // issue 20: closed/total, left (cancelled are not left), waiting apart from blocked; no ETA without a run
      beads: {closed: 927, total: 966, left: 3, waiting: 0, blocked: 0, eta_s: null},
      run: null,
      active_run: null,
      // SPEC 16.4 keys, empty without an active run
      progress: null,
      last_output: null,
      paused_until: null,
      workers: [],
    })
  })

  it('--json during a run (live pid + run-state), then after the run died: stale pid reported and removed', async () => {
    const now = new Date()
    const root = project({
      beads: [
        {id: 'hx-a', title: 'Alpha', status: 'in_progress', owner: 'helix', 'claimed-at': new Date(now.getTime() - 90_000).toISOString(), 'claimed-pid': 1},
        {id: 'hx-b', title: 'Beta', status: 'open'},
      ],
    })
    const s = sleeper()
    kids.push(s.pid!)
    const started = new Date().toISOString()
    writeFileSync(path.join(root, '.ddx', 'helix.pid'), `${s.pid} ${started}\n`)
    const log = path.join(root, '.helix-logs', 'helix-20260101-000000.log')
    writeFileSync(
      path.join(root, '.ddx', 'run-state.json'),
      JSON.stringify({pid: s.pid, started_at: started, phase: 'running', current_cycle: 2, attempted_cycles: 1, completed_cycles: 1, current_bead: 'hx-a', current_bead_started_at: new Date(now.getTime() - 90_000).toISOString(), total_tokens: 50, log}),
    )
    const r = helix(root, ['status', '--json'])
    expect(r.code).toBe(0)
    const j = JSON.parse(r.stdout)
    expect(j.active_run).toEqual({pid: s.pid, started, log})
    expect(j.current_cycle).toBe(2)
    expect(j.running_bead).toMatchObject({id: 'hx-a', title: 'Alpha'})
    expect(j.running_bead.claim_age_seconds).toBeGreaterThanOrEqual(90)
    expect(j.run.pid).toBe(s.pid)
    expect(j.tracker).toMatchObject({in_progress: 1, open: 1, ready: 1})
    const t = helix(root, ['status'])
    expect(t.stdout).toMatch(new RegExp(`^  PID: +${s.pid}$`, 'm'))
    expect(t.stdout).toMatch(/^  Cycle: +2 +Bead: hx-a \(claimed 1m \d+s ago\) Alpha$/m)
    expect(existsSync(log)).toBe(false) // status never creates a log

    // the run dies without cleaning up
    const exited = once(s, 'exit')
    killQuietly(s.pid)
    await exited
    const after = helix(root, ['status', '--json'])
    expect(after.code).toBe(0)
    expect(after.stderr).toBe(`helix: stale PID file removed (pid=${s.pid} was not running)\n`)
    expect(JSON.parse(after.stdout).active_run).toBeNull()
    expect(existsSync(path.join(root, '.ddx', 'helix.pid'))).toBe(false)
    const again = helix(root, ['status'])
    expect(again.stderr).toBe('')
    expect(again.stdout).toMatch(/^Last Run:$/m)
  })

  it('reads the tracker without taking the lock (works while a writer holds it)', () => {
    const root = project({beads: [{id: 'hx-a', title: 'A'}]})
    mkdirSync(path.join(root, '.ddx', 'beads.lock'))
    const r = helix(root, ['status', '--json'], {HELIX_LOCK_TIMEOUT: '0'})
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).tracker.ready).toBe(1)
    expect(existsSync(path.join(root, '.ddx', 'beads.lock'))).toBe(true)
  })

  it('a malformed tracker is one line on stderr and exit 1', () => {
    const root = project()
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), '{"id":"a"}\nnot json\n')
    const r = helix(root, ['status'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/beads\.jsonl:2: malformed bead/)
  })

  it('bad flags: one line, exit 1', () => {
    const root = project()
    const r = helix(root, ['status', '--bogus'])
    expect(r.code).toBe(1)
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    const w = helix(root, ['status', '--watch', 'soon'])
    expect(w.code).toBe(1)
  })
})

describe('helix status --watch (bare, default interval)', () => {
  it('draws frames with cursor-home + clear and exits 0 on SIGINT', async () => {
    const {waitFor} = await import('./helpers.js')
    const {startCli} = await import('../support/cli.js')
    const root = project({beads: [{id: 'hx-a', title: 'A'}]})
    const {child} = startCli(['status', '--watch', '--json'], {cwd: root})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    await waitFor(() => out.includes('"ready": 1'), 15_000)
    expect(out).toContain('\u001b[H')
    expect(out).toContain('\u001b[J')
    expect(out).toContain('every 2s')
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c))
      child.kill('SIGINT')
    })
    expect(code).toBe(0)
  })
})
