// What one project read costs while an agent prints (its log grows, the page is read
// again up to five times a second): the tracker's queries (ready, waiting, stale
// claims) run again only when the tracker changed or 5 s went by. On 20,000 beads they
// took 70–160 ms a read, counted here rather than timed.
import {appendFileSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {trackerText} from '../support/project.js'
import {ProjectReader, TRACKER_VIEW_MS} from '../../src/dashboard/project-view.js'

describe('dashboard: one project read while an agent prints', () => {
  it("reuses the tracker's queries for an unchanged tracker, for 5 s; a changed tracker is queried again", async () => {
    const root = path.join(makeTempDir('helix-dash-cost-'), 'repo')
    mkdirSync(path.join(root, '.ddx'), {recursive: true})
    mkdirSync(path.join(root, '.helix-logs'))
    const tracker = path.join(root, '.ddx', 'beads.jsonl')
    writeFileSync(tracker, trackerText([{id: 'hx-a', title: 'first'}]))
    const reader = new ProjectReader(0, root, {})
    const t0 = Date.parse('2026-11-27T03:00:00Z')
    await reader.read(new Date(t0))
    expect(reader.trackerQueries).toBe(1)
    // the agent prints: only the log grows
    for (let i = 1; i <= 10; i++) {
      appendFileSync(path.join(root, '.helix-logs', 'helix-1.log'), `{"msg":"line ${i}","stream":"agent","dispatch":1}\n`)
      await reader.read(new Date(t0 + i * 200))
    }
    expect(reader.trackerQueries).toBe(1)
    // a changed tracker is a new snapshot: queried again, and what it shows is new
    appendFileSync(tracker, trackerText([{id: 'hx-b', title: 'second'}]))
    const after = await reader.read(new Date(t0 + 2_400))
    expect(reader.trackerQueries).toBe(2)
    expect(after.view.queue?.ready.map((b) => b.id)).toEqual(['hx-a', 'hx-b'])
    // claims go stale with time alone: after 5 s the queries run again
    await reader.read(new Date(t0 + 2_400 + TRACKER_VIEW_MS))
    expect(reader.trackerQueries).toBe(3)
  })
})
