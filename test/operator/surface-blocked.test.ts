/**
 * SPEC 16.2, one meaning of blocked, as `tracker ready`, `next`, `tracker blocked`,
 * `tracker status`, `status` and `unblock` print it: each command run in-process
 * (test/support/in-process.ts), no CLI start. Part of the operator surface
 * (surface-small.e2e.test.ts and surface-project.e2e.test.ts spawn the built CLI).
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {project} from './helpers.js'

const proj = (beads: object[]): string => project({beads: beads as never})
describe('16.2 one meaning of blocked', () => {
  const beads = [
    {id: 'hx-lab', title: 'Labelled', status: 'open', labels: ['blocked', 'x'], notes: 'first\nBLOCKED [2026-11-22T01:00:00Z]: old reason\nBLOCKED [2026-11-23T01:00:00Z]: failed 3 times (rc=1)'},
    {id: 'hx-sta', title: 'Status blocked', status: 'blocked'},
    {id: 'hx-wait', title: 'Waiting', status: 'open', dependencies: [{issue_id: 'hx-wait', depends_on_id: 'hx-missing', type: 'blocks'}]},
    {id: 'hx-rdy', title: 'Ready', status: 'open', priority: 3},
  ]

  it('a labelled bead is out of ready, next and the Ready count, and in tracker blocked (with its reason) and the Blocked count', async () => {
    const root = proj(beads)
    expect((await helix(root, ['tracker', 'ready'])).stdout.trim().split('\n').map((l) => l.split(' ')[0])).toEqual(['hx-rdy'])
    expect((await helix(root, ['next'])).stdout).toBe('hx-rdy  Ready\n')
    const blocked = await helix(root, ['tracker', 'blocked'])
    expect(blocked.code).toBe(0)
    const lines = blocked.stdout.trim().split('\n')
    expect(lines.map((l) => l.split(' ')[0])).toEqual(['hx-lab', 'hx-sta', 'hx-wait'])
    expect(lines[0]).toContain('(label blocked: failed 3 times (rc=1))')
    const counts = JSON.parse((await helix(root, ['tracker', 'status', '--json'])).stdout)
    expect(counts).toMatchObject({open: 3, blocked: 3, ready: 1})
    const status = await helix(root, ['status'])
    expect(status.stdout).toMatch(/^  Ready: +1$/m)
    // issue 20: the tracker's blocked count (3) splits into needs-a-human (2) and waiting on a dependency (1)
    expect(status.stdout).toMatch(/^  Blocked: +2 \(needs a human\), 1 waiting on dependencies$/m)
    expect(JSON.parse((await helix(root, ['status', '--json'])).stdout).beads).toMatchObject({blocked: 2, waiting: 1})
    expect(JSON.parse((await helix(root, ['status', '--json'])).stdout).tracker).toMatchObject({open: 3, blocked: 3, ready: 1})
  })

  it('helix unblock removes the label, turns status blocked into open; bad ids change nothing', async () => {
    const root = proj(beads)
    const file = path.join(root, '.ddx', 'beads.jsonl')
    const u = await helix(root, ['unblock', 'hx-lab'])
    expect(u.code).toBe(0)
    expect(u.stdout).toBe("unblocked hx-lab (removed label 'blocked')\n")
    const s = await helix(root, ['unblock', 'hx-sta'])
    expect(s.stdout).toBe('unblocked hx-sta (status blocked → open)\n')
    const rows = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(rows.find((b) => b.id === 'hx-lab').labels).toEqual(['x'])
    expect(rows.find((b) => b.id === 'hx-sta').status).toBe('open')
    expect((await helix(root, ['tracker', 'ready'])).stdout.trim().split('\n').map((l) => l.split(' ')[0]).sort()).toEqual(['hx-lab', 'hx-rdy', 'hx-sta'])

    const bytes = readFileSync(file)
    const n = await helix(root, ['unblock', 'hx-rdy'])
    expect(n.code).toBe(0)
    expect(n.stdout).toBe('hx-rdy is not blocked; nothing changed\n')
    const bad = await helix(root, ['unblock', 'hx-nope\u001b[2J'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toBe("helix: unknown bead 'hx-nope?[2J'\n")
    const none = await helix(root, ['unblock'])
    expect(none.code).toBe(1)
    expect(none.stderr).toBe('helix: missing required argument: id (usage: helix unblock <id>)\n')
    expect(readFileSync(file).equals(bytes)).toBe(true)
  })
})
