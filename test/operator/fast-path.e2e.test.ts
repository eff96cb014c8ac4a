import {existsSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {fastPathKey} from '../../src/cli/fast-path.js'
import type {Bead} from '../../src/tracker/types.js'
import {helix, project, REAL_DDX, sleeper} from './helpers.js'

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

  // the DDx tracker: its ready list is ~1.5 MB of JSON, larger than a pipe buffer
  const oclif = {HELIX_NO_FAST_PATH: '1'}
  // ages tick between the two runs; everything else must match byte for byte
  const norm = (t: string) => t.replace(/"age_seconds": \d+/g, '"age_seconds": 0').replace(/"claim_age_seconds": \d+/g, '')
  function sameAsOclif(argvs: string[][]): void {
    const root = project({copy: REAL_DDX})
    for (const args of argvs) {
      const fast = helix(root, args)
      const slow = helix(root, args, oclif)
      expect({args, code: fast.code, err: fast.stderr}).toEqual({args, code: 0, err: ''})
      expect({args, code: slow.code, err: slow.stderr}).toEqual({args, code: 0, err: ''})
      expect(fast.stdout.length).toBeGreaterThan(0)
      // (a 1.5 MB answer on a pipe: the fast path must not exit before stdout drains)
      expect(norm(fast.stdout) === norm(slow.stdout)).toBe(true)
    }
  }

  // (three tests, not one: each pair of runs parses the real 1.5 MB tracker twice)
  it('status prints exactly what the oclif command prints', () => {
    sameAsOclif([['status'], ['status', '--json']])
  })

  it('tracker show and tracker close print what the oclif commands print, refusals included', () => {
    const beads: Bead[] = [
      {id: 'hx-a', title: 'a <b>\u001b[31m', status: 'open', description: 'd'},
      {id: 'hx-b', title: 'waits on a', status: 'open', dependencies: [{issue_id: 'hx-b', depends_on_id: 'hx-a', type: 'blocks'}]},
      {id: 'hx-c', title: 'claimed', status: 'in_progress', 'claim-token': 'feedfacefeedface'},
    ]
    // each close changes the tracker, so the fast and the oclif run each get a fresh project
    const twice = (args: string[], env: Record<string, string> = {}) => {
      const fast = helix(project({beads}), args, env)
      const slow = helix(project({beads}), args, {...env, ...oclif})
      const stamp = (t: string) => t.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
      expect({args, code: fast.code, out: stamp(fast.stdout), err: fast.stderr}).toEqual({args, code: slow.code, out: stamp(slow.stdout), err: slow.stderr})
      return fast
    }
    expect(twice(['tracker', 'show', 'hx-a']).stdout).toContain('hx-a')
    expect(JSON.parse(twice(['tracker', 'show', 'hx-b', '--json']).stdout).id).toBe('hx-b')
    expect(twice(['tracker', 'show', 'hx-nope']).code).toBe(1)
    expect(twice(['tracker', 'close', 'hx-a']).stdout).toBe('closed hx-a\n')
    expect(JSON.parse(twice(['tracker', 'close', 'hx-a', '--json']).stdout).status).toBe('closed')
    // refused: a dependency is open; a claim fenced by another token
    expect(twice(['tracker', 'close', 'hx-b']).code).not.toBe(0)
    expect(twice(['tracker', 'close', 'hx-c'], {HELIX_CLAIM_TOKEN: '0123456789abcdef'}).code).not.toBe(0)
    expect(twice(['tracker', 'close', 'hx-nope']).stderr).toMatch(/^helix: .*hx-nope/)
  })

  it('a malformed tracker: the same error line as oclif, exit 1', () => {
    const root = project()
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'oops\n')
    for (const args of [['status'], ['tracker', 'show', 'hx-1']]) {
      const fast = helix(root, args)
      const slow = helix(root, args, oclif)
      expect(fast.code).toBe(1)
      expect(fast.stderr).toMatch(/^helix: .*beads\.jsonl:1: malformed bead/)
      expect(fast.stderr).toBe(slow.stderr)
    }
  })

  it('the parse cache changes nothing: cached answers equal a full parse byte for byte (done beads are stubs in the cache)', () => {
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
      const first = helix(root, args)
      expect(existsSync(cacheDir) && readdirSync(cacheDir).some((f) => f.startsWith('tracker-'))).toBe(true)
      const cached = helix(root, args)
      const full = helix(root, args, noCache)
      expect({args, code: cached.code, err: cached.stderr}).toEqual({args, code: 0, err: ''})
      expect({args, out: norm(cached.stdout)}).toEqual({args, out: norm(full.stdout)})
      expect({args, out: norm(first.stdout)}).toEqual({args, out: norm(full.stdout)})
    }
  })
})

