// `helix status` in-process (test/support/in-process.ts): a live run and then a dead one, a
// held lock, a malformed tracker, an unknown flag. The fast path's answers on the real
// tracker, a bad --watch (one that parsed would never end in-process) and --watch:
// status.e2e.test.ts.
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {once} from 'node:events'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {killQuietly, project, sleeper} from './helpers.js'

const kids: number[] = []
afterEach(() => {
  while (kids.length) killQuietly(kids.pop())
})

describe('helix status', () => {
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
    const r = await helix(root, ['status', '--json'])
    expect(r.code).toBe(0)
    const j = JSON.parse(r.stdout)
    expect(j.active_run).toEqual({pid: s.pid, started, log})
    expect(j.current_cycle).toBe(2)
    expect(j.running_bead).toMatchObject({id: 'hx-a', title: 'Alpha'})
    expect(j.running_bead.claim_age_seconds).toBeGreaterThanOrEqual(90)
    expect(j.run.pid).toBe(s.pid)
    expect(j.tracker).toMatchObject({in_progress: 1, open: 1, ready: 1})
    const t = await helix(root, ['status'])
    expect(t.stdout).toMatch(new RegExp(`^  PID: +${s.pid}$`, 'm'))
    expect(t.stdout).toMatch(/^  Cycle: +2 +Bead: hx-a \(claimed 1m \d+s ago\) Alpha$/m)
    expect(existsSync(log)).toBe(false) // status never creates a log

    // the run dies without cleaning up
    const exited = once(s, 'exit')
    killQuietly(s.pid)
    await exited
    const after = await helix(root, ['status', '--json'])
    expect(after.code).toBe(0)
    expect(after.stderr).toBe(`helix: stale PID file removed (pid=${s.pid} was not running)\n`)
    expect(JSON.parse(after.stdout).active_run).toBeNull()
    expect(existsSync(path.join(root, '.ddx', 'helix.pid'))).toBe(false)
    const again = await helix(root, ['status'])
    expect(again.stderr).toBe('')
    expect(again.stdout).toMatch(/^Last Run:$/m)
  })

  it('reads the tracker without taking the lock (works while a writer holds it)', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'A'}]})
    mkdirSync(path.join(root, '.ddx', 'beads.lock'))
    const r = await helix(root, ['status', '--json'], {HELIX_LOCK_TIMEOUT: '0'})
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).tracker.ready).toBe(1)
    expect(existsSync(path.join(root, '.ddx', 'beads.lock'))).toBe(true)
  })

  it('a malformed tracker is one line on stderr and exit 1', async () => {
    const root = project()
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), '{"id":"a"}\nnot json\n')
    const r = await helix(root, ['status'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/beads\.jsonl:2: malformed bead/)
  })
})

describe('helix status: bad flags', () => {
  // issue 30: was in status.e2e (the fast path declines an unknown flag: oclif refuses it)
  it('a run-state file that is cut short is said as such, not shown as "Last Run: none"', async () => {
    const root = project()
    const file = path.join(root, '.ddx', 'run-state.json')
    writeFileSync(file, '{"pid": 12, "started_at": "2026-')
    const r = await helix(root, ['status'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^Last Run: unknown: \.ddx\/run-state\.json is not valid JSON \(cut short, or edited by hand\)$/m)
    writeFileSync(file, '')
    expect((await helix(root, ['status'])).stdout).toMatch(/^Last Run: unknown: \.ddx\/run-state\.json is empty$/m)
  })

  it('an unknown flag: one line, exit 1', async () => {
    const r = await helix(project(), ['status', '--bogus'])
    expect(r.code).toBe(1)
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
  })
})
