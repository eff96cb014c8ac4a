// A tracker of thousands of beads: the page is sent the first 100 of each queue list
// with every list's full length, so one state stays small and one render short
// however large the tracker grows (20,000 beads made each state 878 kB and each
// render 3.9 s of the browser's time before, several times a second while an agent
// printed). The figures still count every bead.
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {trackerText} from '../support/project.js'
import {LIST_CAP, ProjectReader} from '../../src/dashboard/project-view.js'

const NOW = new Date('2026-11-27T15:00:00Z')

function bigProject(n: number): string {
  const root = path.join(makeTempDir('helix-dash-big-'), 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  const beads: Array<Record<string, unknown>> = []
  for (let i = 0; i < n; i++) {
    const id = `hx-${String(i).padStart(5, '0')}`
    const title = `bead ${i}: a title of ordinary length for a task`
    // closed today, one a second apart, so the newest are known
    if (i % 4 === 0) beads.push({id, title, status: 'closed', updated_at: new Date(NOW.getTime() - (n - i) * 1000).toISOString()})
    else if (i % 4 === 1) beads.push({id, title, labels: ['blocked'], notes: 'BLOCKED: blocked after 3 attempts; last: rc=1: tests fail'})
    else if (i % 4 === 2) beads.push({id, title, dependencies: [{depends_on_id: `hx-${String(i + 1).padStart(5, '0')}`, type: 'blocks'}]})
    else beads.push({id, title})
  }
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText(beads))
  return root
}

describe('dashboard: a tracker of thousands of beads', () => {
  it('sends the first 100 of each list with their full lengths; the newest closed first; the figures count all', async () => {
    const n = 4000
    const root = bigProject(n)
    const {view} = await new ProjectReader(0, root, {}).read(NOW)
    const q = view.queue!
    expect(view.error).toBeNull()
    expect(q.lengths).toEqual({ready: n / 4, waiting: n / 4, blocked: n / 4, closed_today: n / 4, held: 0})
    for (const list of [q.ready, q.waiting, q.blocked, q.closed_today]) expect(list).toHaveLength(LIST_CAP)
    expect(q.counts.total).toBe(n)
    expect(q.counts.closed).toBe(n / 4)
    // the newest closed bead first
    expect(q.closed_today[0].id).toBe(`hx-${String(n - 4).padStart(5, '0')}`)
    expect(q.closed_today[1].id).toBe(`hx-${String(n - 8).padStart(5, '0')}`)
    // the state stays small: the first 100 of four lists, not 4,000 rows
    expect(JSON.stringify(view).length).toBeLessThan(80_000)
  })
})
