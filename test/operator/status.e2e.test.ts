import {existsSync, readFileSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {helix, killQuietly, project, REAL_HELIX} from './helpers.js'

// `helix status` through the built CLI: the startup fast path's answers on the real
// tracker (what a tmux pane or a script polls), a bad --watch (one that parsed would never
// end in-process) and --watch's frames and SIGINT. A live or dead run, a held lock, a
// malformed tracker and an unknown flag: status.test.ts, in-process.

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
})

describe('helix status: bad flags', () => {
  it('a bad --watch interval: exit 1', () => {
    const root = project()
    const w = helix(root, ['status', '--watch', 'soon'])
    expect(w.code).toBe(1)
  })
})

describe('helix status --watch (bare, default interval)', () => {
  it('ends, exit 0 and quiet, once its reader goes away (| head)', async () => {
    const {waitFor} = await import('./helpers.js')
    const {startCli} = await import('../support/cli.js')
    const root = project({beads: [{id: 'hx-a', title: 'A'}]})
    const w = startCli(['status', '--watch', '0.2'], {cwd: root})
    await waitFor(() => w.stdout.includes('Tracker:'), 15_000)
    w.child.stdout.destroy()
    const r = await w.done
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
  })

  it('into a pipe draws plain frames (no cursor moves or clears: those are for a terminal, watch-tmux.e2e) and exits 0 on SIGINT', async () => {
    const {waitFor} = await import('./helpers.js')
    const {startCli} = await import('../support/cli.js')
    const root = project({beads: [{id: 'hx-a', title: 'A'}]})
    const {child} = startCli(['status', '--watch', '--json'], {cwd: root})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    await waitFor(() => out.includes('"ready": 1'), 15_000)
    expect(out).not.toContain('\u001b')
    expect(out).toContain('every 2s')
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c))
      child.kill('SIGINT')
    })
    expect(code).toBe(0)
  })
})
