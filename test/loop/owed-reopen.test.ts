// SPEC 18.1a: a reopen that cannot be written (the tracker is locked) is recorded
// as owed and written by the next start (SPEC 18.2), with fakes for every port.
import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import type {LandResult, PendingReopen, Workspace} from '../../src/loop/ports.js'
import {FakeLanding, check, closeIt, harness, opts} from './fakes.js'

class Landing extends FakeLanding {
  owed: PendingReopen[] = []
  override async land(ws: Workspace): Promise<LandResult> {
    return {landed: false, reason: 'conflict in a.ts', preservedRef: `refs/helix/preserved/${ws.bead}/${ws.attempt}`}
  }
  async leftovers() {
    return []
  }
  pending = {
    list: async () => [...this.owed],
    add: async (p: PendingReopen) => {
      this.owed = [...this.owed.filter((x) => x.bead !== p.bead), p]
    },
    remove: async (bead: string) => {
      this.owed = this.owed.filter((x) => x.bead !== bead)
    },
  }
}

describe('a reopen the tracker refuses is owed, and paid at the next start', () => {
  it('records it, says so, and the next run reopens the bead with the same note', async () => {
    const landing = new Landing()
    const h = harness([{id: 'a', title: 'a'}], {implementation: (c, t) => closeIt(c, t), check: check('WAIT')}, {landing})
    const reopen = h.tracker.reopen.bind(h.tracker)
    h.tracker.reopen = async () => {
      throw new Error('helix: tracker lock held by pid 42 for more than 10 s')
    }
    await runLoop(h.deps, opts({workers: 2, maxCycles: 1}))
    expect(h.tracker.get('a').status).toBe('closed')
    expect(landing.owed).toEqual([{bead: 'a', note: expect.stringMatching(/^NOT LANDED \[[^\]]+\]: conflict in a\.ts; work kept at refs\/helix\/preserved\/a\/1$/), at: expect.any(String)}])
    expect(h.both.some((l) => /could not reopen a \(tracker lock held by pid 42/.test(l))).toBe(true)
    h.tracker.reopen = reopen
    const reopened: string[] = []
    h.tracker.reopen = async (id: string, note: string) => {
      reopened.push(`${id}: ${note}`)
      await reopen(id, note)
    }
    await runLoop(h.deps, opts({workers: 2, maxCycles: 1}))
    // paid first, at the start, with the note of the attempt that owed it
    expect(reopened[0]).toMatch(/^a: NOT LANDED \[[^\]]+\]: conflict in a\.ts; work kept at refs\/helix\/preserved\/a\/1$/)
    expect(h.normal.some((l) => /^helix: reopened a \(owed since /.test(l))).toBe(true)
    expect(h.tracker.get('a').notes).toMatch(/NOT LANDED \[[^\]]+\]: conflict in a\.ts; work kept at refs\/helix\/preserved\/a\/1/)
    expect(landing.owed).toEqual([])
  })
})
