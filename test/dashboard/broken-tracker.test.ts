// A tracker line broken under a live page (a bad merge, a hand edit): the page says what
// is wrong and how to fix it, and keeps showing the last queue it could read (it
// showed "no tracker" instead, an empty queue, as if every bead had gone). The next
// good read clears the message.
import {appendFileSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {trackerText} from '../support/project.js'
import {Hub} from '../../src/dashboard/hub.js'
import {ProjectReader} from '../../src/dashboard/project-view.js'
import type {DashboardState} from '../../src/dashboard/types.js'

describe('dashboard: a malformed tracker line', () => {
  it('says which line and how to repair it, keeps the last good queue, and clears once the tracker reads again', async () => {
    const root = path.join(makeTempDir('helix-dash-broken-'), 'repo')
    mkdirSync(path.join(root, '.ddx'), {recursive: true})
    const tracker = path.join(root, '.ddx', 'beads.jsonl')
    const good = trackerText([{id: 'hx-a', title: 'first'}, {id: 'hx-b', title: 'second'}])
    writeFileSync(tracker, good)
    const reader = new ProjectReader(0, root, {})
    const hub = new Hub({projects: [{root, read: (now) => reader.read(now)}], watch: () => ({close() {}})})
    await hub.start()
    try {
      const state = () => (JSON.parse(hub.json) as DashboardState).projects[0]
      expect(state().queue?.ready.map((b) => b.id)).toEqual(['hx-a', 'hx-b'])
      appendFileSync(tracker, '{"id": "hx-c", broken\n')
      await hub.refresh()
      expect(state().error).toMatch(/^cannot read the project: .*beads\.jsonl:3: malformed bead .*run 'helix tracker doctor'/)
      expect(state().queue?.ready.map((b) => b.id)).toEqual(['hx-a', 'hx-b'])
      writeFileSync(tracker, good)
      await hub.refresh()
      expect(state().error).toBeNull()
    } finally {
      hub.close()
    }
  })
})
