// helix next and helix doctor, each command run in-process (test/support/in-process.ts):
// what they print and refuse is the command's logic; exit codes as a shell sees them are
// e2e elsewhere (surface-project.e2e.test.ts spawns doctor outside a project).
import {mkdirSync, readdirSync, utimesSync, writeFileSync, chmodSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {killQuietly, project, REAL_HELIX, sleeper, tempDir as tempDirFor} from './helpers.js'

const kids: number[] = []
afterEach(() => {
  while (kids.length) killQuietly(kids.pop())
})

describe('helix next', () => {
  it('real tracker: the single ready bead', async () => {
    const root = project({copy: REAL_HELIX})
    const r = await helix(root, ['next'])
    expect(r).toMatchObject({code: 0, stderr: ''})
    expect(r.stdout).toMatch(/^helix-a5b7fac9 {2}\S.*\n$/)
  })

  it('SPEC 5.3 tiers: a governed bead beats a higher-priority plain task; blocked label skipped', async () => {
    const root = project({
      beads: [
        {id: 'hx-plain', title: 'plain', priority: 0, created_at: '2026-01-01T00:00:00Z'},
        {id: 'hx-gov', title: 'governed', priority: 2, acceptance: 'tests pass', created_at: '2026-01-01T00:00:00Z'},
        {id: 'hx-gov0', title: 'governed but blocked', priority: 0, 'spec-id': 'S1', labels: ['blocked']},
      ],
    })
    expect((await helix(root, ['next'])).stdout).toBe('hx-gov  governed\n')
    expect(JSON.parse((await helix(root, ['next', '--json'])).stdout)).toEqual({id: 'hx-gov', title: 'governed'})
  })

  it("honours an active run's skip list", async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', priority: 0}, {id: 'hx-b', title: 'b', priority: 1}]})
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(path.join(root, '.ddx', 'helix.pid'), `${s.pid} ${new Date().toISOString()}\n`)
    writeFileSync(path.join(root, '.ddx', 'run-state.json'), JSON.stringify({pid: s.pid, skipped: [{id: 'hx-a', reason: 'x', attempts: 4}]}))
    expect((await helix(root, ['next'])).stdout).toBe('hx-b  b\n')
  })

  it('nothing ready: "no ready issues"', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', status: 'closed'}]})
    expect(await helix(root, ['next'])).toMatchObject({code: 0, stdout: 'no ready issues\n'})
    expect((await helix(root, ['next', '--json'])).stdout).toBe('null\n')
  })
})

describe('helix doctor', () => {
  function healthy(): {root: string; agent: string} {
    const root = project({beads: [{id: 'hx-a', title: 'a'}]})
    const agent = path.join(root, 'my-agent')
    // a command agent that can answer a review: doctor's review preflight passes
    writeFileSync(agent, '#!/bin/sh\necho REVIEW_STATUS: CLEAN\n')
    chmodSync(agent, 0o755)
    return {root, agent}
  }

  it('healthy project: exit 0', async () => {
    const {root, agent} = healthy()
    const r = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(r.stdout).toMatch(/^ok +node: v\d+/m)
    expect(r.stdout).toMatch(/no problems found\n$/)
    expect(r.code).toBe(0)
  })

  it('catches a stale lock directory and a stale pid file, with fixes; changes nothing', async () => {
    const {root, agent} = healthy()
    const lock = path.join(root, '.ddx', 'beads.lock')
    mkdirSync(lock)
    const old = new Date(Date.now() - 3600_000)
    utimesSync(lock, old, old)
    writeFileSync(path.join(root, '.ddx', 'helix.pid'), '999999999 2026-01-01T00:00:00Z\n')
    const r = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^FAIL +tracker lock: stale lock directory \.ddx\/beads\.lock/m)
    expect(r.stdout).toMatch(/fix: remove it: rm -r \.ddx\/beads\.lock/)
    expect(r.stdout).toMatch(/^FAIL +run mutex: stale PID file/m)
    expect(r.stdout).toMatch(/2 problem\(s\) need fixing\n$/)
    expect(readdirSync(path.join(root, '.ddx')).sort()).toEqual(['beads.jsonl', 'beads.lock', 'helix.pid'])
  })

  it('a lock touched within the stale window (a live writer refreshes it) is not stale', async () => {
    const {root, agent} = healthy()
    mkdirSync(path.join(root, '.ddx', 'beads.lock'))
    const r = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(r.code).toBe(0)
  })

  it("DDx's lock directory: stale when its writer pid is dead, held while it lives", async () => {
    const {root, agent} = healthy()
    const lock = path.join(root, '.ddx', 'beads.lock')
    mkdirSync(lock)
    writeFileSync(path.join(lock, 'pid'), '999999999\n')
    writeFileSync(path.join(lock, 'acquired_at'), '2026-01-01T00:00:00Z\n')
    const old = new Date(Date.now() - 3600_000)
    utimesSync(lock, old, old)
    const dead = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(dead.code).toBe(1)
    expect(dead.stdout).toMatch(/^FAIL +tracker lock: stale lock directory \.ddx\/beads\.lock \(last touched \d+s ago, DDx writer pid 999999999 is not running\)/m)
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(path.join(lock, 'pid'), `${s.pid}\n`)
    // a live writer took the lock after it started (else its pid counts as reused, SPEC 13.1)
    writeFileSync(path.join(lock, 'acquired_at'), new Date().toISOString() + '\n')
    utimesSync(lock, old, old)
    const live = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(live.stdout).toMatch(new RegExp(`^ok +tracker lock: held by DDx writer pid ${s.pid}`, 'm'))
    expect(live.code).toBe(0)
  })

  it('SPEC 13.1: doctor shows a held lock\'s age and owner, and why a stale one is stale (future mtime, junk pid)', async () => {
    const {root, agent} = healthy()
    const lock = path.join(root, '.ddx', 'beads.lock')
    mkdirSync(lock)
    const s = sleeper()
    kids.push(s.pid!)
    writeFileSync(path.join(lock, 'pid'), `${s.pid}\n`)
    writeFileSync(path.join(lock, 'acquired_at'), new Date().toISOString() + '\n')
    const held = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(held.stdout).toMatch(new RegExp(`^ok +tracker lock: held by DDx writer pid ${s.pid} \\(touched \\d+s ago\\)$`, 'm'))
    const future = new Date(Date.now() + 120_000)
    utimesSync(lock, future, future)
    const ahead = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(ahead.code).toBe(1)
    expect(ahead.stdout).toMatch(/^FAIL +tracker lock: stale lock directory \.ddx\/beads\.lock \(mtime 1\d\ds in the future\)$/m)
    writeFileSync(path.join(lock, 'pid'), 'junk\n')
    const old = new Date(Date.now() - 3600_000)
    utimesSync(lock, old, old)
    const junk = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(junk.stdout).toMatch(/^FAIL +tracker lock: stale lock directory \.ddx\/beads\.lock \(last touched \d+s ago, DDx lock with an empty or unreadable pid\)$/m)
    // helix's other locks are shown too, with age and staleness
    const rsLock = path.join(root, '.ddx', 'run-state.lock')
    mkdirSync(rsLock)
    utimesSync(rsLock, old, old)
    const other = await helix(root, ['doctor'], {HELIX_AGENT: agent})
    expect(other.stdout).toMatch(/^WARN +lock: stale lock directory \.ddx\/run-state\.lock \(touched \d+s ago, not refreshed within the stale window\)$/m)
  })

  it('missing implementation agent and malformed tracker are problems', async () => {
    const root = project()
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), '{"id":"a"}\n{oops\n')
    const r = await helix(root, ['doctor', '--json'], {HELIX_AGENT: 'no-such-agent-xyz'})
    expect(r.code).toBe(1)
    const j = JSON.parse(r.stdout)
    expect(j.problems).toBe(2)
    expect(j.checks.find((c: any) => c.what === 'implementation agent no-such-agent-xyz').level).toBe('fail')
    expect(j.checks.find((c: any) => c.what === 'tracker').detail).toMatch(/1 malformed line\(s\), first \.ddx\/beads\.jsonl:2/)
  })

  it("--agent '' is refused as run refuses it, not read as the default agent", async () => {
    const r = await helix(project(), ['doctor', '--agent', ''])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('helix: agent name is empty (use codex, claude, or a path to an executable)\n')
    expect(r.stdout).toBe('')
  })
})

describe('helix next prints the title too, sanitized (issue 20)', () => {
  it('a title with control characters cannot reach the terminal raw; --json keeps the data', async () => {
    const title = 'Fix \u001b]0;pwned\u0007 the \u202eparser'
    const root = project({beads: [{id: 'hx-t', title, priority: 0}]})
    expect((await helix(root, ['next'])).stdout).toBe('hx-t  Fix ?]0;pwned? the ?parser\n')
    expect(JSON.parse((await helix(root, ['next', '--json'])).stdout)).toEqual({id: 'hx-t', title})
  })
})

describe('helix doctor outside a project', () => {
  it('says "not a helix project" once', async () => {
    const dir = tempDirFor()
    const r = await helix(dir, ['doctor'])
    expect(r.code).toBe(1)
    expect(`${r.stdout}${r.stderr}`.match(/not a helix project/g)).toHaveLength(1)
  })
})
