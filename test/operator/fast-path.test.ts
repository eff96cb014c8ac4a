// The startup fast path's unit side: which argv shapes it takes (bin/run.js), and the
// parse cache it and the oclif commands read through (operator/report.ts,
// app/tracker-report.ts), each command in-process (test/support/in-process.ts). The fast
// path's own answers, spawned: fast-path.e2e.test.ts.
import {existsSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {fastPathKey} from '../../src/cli/fast-path.js'
import type {Bead} from '../../src/tracker/types.js'
import {helixInProcess} from '../support/in-process.js'
import {project, sleeper} from './helpers.js'

describe('startup fast path (bin/run.js without oclif)', () => {
  it('handles only the exact hot argv shapes', () => {
    expect(fastPathKey(['status'])).toEqual({key: 'status', json: false})
    expect(fastPathKey(['status', '--json'])).toEqual({key: 'status', json: true})
    expect(fastPathKey(['tracker', 'show', 'hx-1'])).toEqual({key: 'tracker show', json: false, id: 'hx-1'})
    expect(fastPathKey(['tracker', 'close', 'hx-1', '--json'])).toEqual({key: 'tracker close', json: true, id: 'hx-1'})
    for (const a of [['tracker', 'show'], ['tracker', 'show', ''], ['tracker', 'show', 'a', 'b'], ['tracker', 'show', '--json', 'hx-1'], ['tracker', 'close', '-x'], ['tracker', 'close', 'hx-1', '--reason', 'r'], ['tracker', 'update', 'hx-1'], ['tracker', 'ready', 'hx-1']]) {
      expect(fastPathKey(a)).toBeNull()
    }
    for (const a of [['status', '--watch'], ['status', '--help'], ['status', '--json', '--bogus'], ['--json', 'status'], ['next'], ['tracker'], ['tracker', 'ready', '--execution'], ['tracker', 'ready', '--json'], ['tracker', 'status'], ['constructor'], []]) {
      expect(fastPathKey(a)).toBeNull()
    }
  })

  it('the parse cache changes nothing: cached answers equal a full parse byte for byte (done beads are stubs in the cache)', async () => {
    // every shape the queries treat apart, on a tracker big enough to get a cache (≥ 64 KB)
    const long = 'd'.repeat(400)
    const beads: Bead[] = [
      {id: 'hx-epic', title: 'epic with closed children', issue_type: 'epic', status: 'open', description: long},
      {id: 'hx-epic2', title: 'epic, all children done', issue_type: 'epic', status: 'open'},
      {id: 'hx-done-kid', title: 'done child', status: 'closed', parent: 'hx-epic', description: long},
      {id: 'hx-gone-kid', title: 'cancelled child', status: 'cancelled', parent: 'hx-epic2', labels: ['blocked']},
      {id: 'hx-done-blocked', title: 'closed but labelled blocked', status: 'closed', labels: ['blocked'], notes: 'BLOCKED: old'},
      {id: 'hx-dep-closed', title: 'waits on a closed bead', status: 'open', dependencies: [{issue_id: 'hx-dep', depends_on_id: 'hx-done-kid', type: 'blocks'}]},
      {id: 'hx-dep-cancelled', title: 'waits on a cancelled bead', status: 'open', dependencies: [{issue_id: 'hx-dep', depends_on_id: 'hx-gone-kid', type: 'blocks'}]},
      {id: 'hx-dep-missing', title: 'waits on a missing bead', status: 'open', dependencies: [{issue_id: 'hx-dep', depends_on_id: 'hx-nope', type: 'blocks'}]},
      {id: 'hx-blocked', title: 'labelled blocked', status: 'open', labels: ['blocked'], notes: 'BLOCKED: needs a key\n'},
      {id: 'hx-st-blocked', title: 'status blocked', status: 'blocked'},
      {id: 'hx-claimed', title: 'old claim', status: 'in_progress', owner: 'someone', 'claimed-at': '2020-01-01T00:00:00Z', 'claimed-pid': '999999999'},
      {id: 'hx-parent-null', title: 'closed, parent null', status: 'closed', parent: null as unknown as string},
      {id: 'hx-odd-status', title: 'closed with odd status type', status: 3 as unknown as string},
      ...Array.from({length: 300}, (_, i): Bead => ({id: `hx-c${String(i).padStart(3, '0')}`, title: `closed ${i}`, status: i % 7 ? 'closed' : 'cancelled', parent: i % 5 ? undefined : 'hx-epic', description: long, 'closing_commit_sha': 'f'.repeat(40)})),
    ]
    const root = project({beads: beads.map((b) => JSON.parse(JSON.stringify(b)) as Bead)})
    // a live run whose run-state names done beads: titles and claim ages come from their full lines
    const s = sleeper()
    writeFileSync(path.join(root, '.ddx', 'helix.pid'), `${s.pid} ${new Date().toISOString()}\n`)
    const soon = new Date(Date.now() + 3_600_000).toISOString()
    writeFileSync(
      path.join(root, '.ddx', 'run-state.json'),
      JSON.stringify({pid: s.pid, current_bead: 'hx-c001', current_bead_started_at: '2026-01-01T00:00:00Z', focused_epic: 'hx-epic', backoff_until: {'hx-c002': soon, 'hx-dep-closed': soon}, attempts: {'hx-c002': 2}, skipped: [{id: 'hx-c003', reason: 'x'}], workers: [{slot: 1, bead: 'hx-c004', started_at: '2026-01-01T00:00:00Z'}]}),
    )
    // ages tick between runs: everything else must match
    const norm = (t: string) => t.replace(/("(?:age_seconds|claim_age_seconds|elapsed_s|eta_s)": )\d+/g, '$1#').replace(/\d+/g, '#')
    const noCache = {HELIX_NO_PARSE_CACHE: '1'}
    const cacheDir = path.join(root, '.helix', 'cache')
    for (const args of [['status', '--json'], ['status'], ['tracker', 'ready', '--json'], ['tracker', 'ready'], ['tracker', 'status', '--json'], ['tracker', 'blocked', '--json'], ['tracker', 'blocked']]) {
      const first = await helixInProcess(root, args)
      expect(existsSync(cacheDir) && readdirSync(cacheDir).some((f) => f.startsWith('tracker-'))).toBe(true)
      const cached = await helixInProcess(root, args)
      const full = await helixInProcess(root, args, noCache)
      expect({args, code: cached.code, err: cached.stderr}).toEqual({args, code: 0, err: ''})
      expect({args, out: norm(cached.stdout)}).toEqual({args, out: norm(full.stdout)})
      expect({args, out: norm(first.stdout)}).toEqual({args, out: norm(full.stdout)})
    }
  })
})
