import {readFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {hostname} from 'node:os'
import {afterEach, describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {killQuietly, project, sleeper} from './helpers.js'

// `helix recover` in-process (issue 30; was recover.e2e): what it reclaims and says. The
// claimers are real processes (a dead pid, a live sleeper); recover through the built CLI:
// agents/escape.e2e.test.ts.

const kids: number[] = []
afterEach(() => {
  while (kids.length) killQuietly(kids.pop())
})

describe('helix recover', () => {
  it('reclaims stale helix claims, skips live/fresh/foreign ones; --dry-run changes nothing', async () => {
    const dead = spawnSync('true').pid!
    const live = sleeper()
    kids.push(live.pid!)
    const old = new Date(Date.now() - 3 * 3600_000).toISOString()
    const fresh = new Date(Date.now() - 60_000).toISOString()
    const claim = (id: string, pid: number, at: string, owner = 'helix') => ({
      id,
      title: id,
      status: 'in_progress',
      owner,
      'claimed-at': at,
      'claimed-pid': pid,
      'claimed-machine': hostname(),
    })
    const root = project({
      beads: [claim('hx-dead', dead, old), claim('hx-live', live.pid!, old), claim('hx-fresh', dead, fresh), claim('hx-other', dead, old, 'alice')],
    })
    const file = path.join(root, '.ddx', 'beads.jsonl')
    const before = readFileSync(file)
    const dry = await helix(root, ['recover', '--dry-run'])
    expect(dry.code).toBe(0)
    expect(dry.stdout).toMatch(/would reclaim orphaned hx-dead \(age=\d+s, pid=\d+ dead\)/)
    expect(readFileSync(file).equals(before)).toBe(true)

    const r = await helix(root, ['recover'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`helix: hx-live claimed by PID ${live.pid} which is still alive, skipping`)
    expect(r.stdout).toMatch(/helix: hx-fresh claimed \d+s ago \(threshold 7200s\), too fresh to reclaim/)
    expect(r.stdout).toMatch(/helix: reclaiming orphaned hx-dead/)
    expect(r.stdout).toContain('helix: recovered 1 orphaned issue(s)')
    const after = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const byId = Object.fromEntries(after.map((b) => [b.id, b]))
    expect(byId['hx-dead'].status).toBe('open')
    expect(byId['hx-dead'].owner).toBeUndefined()
    expect(byId['hx-live'].status).toBe('in_progress')
    expect(byId['hx-other'].status).toBe('in_progress')

    const again = await helix(root, ['recover'])
    expect(again.stdout).toContain('helix: no orphaned claims to recover')
  })
})
