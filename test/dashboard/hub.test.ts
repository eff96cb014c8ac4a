// SPEC 22.1's cost rule, counted (not timed): however many pages are open, a project
// has one watcher, a change is read once, the fleet is read at most once per 10 s, and
// with no page open nothing is scheduled at all.
import {describe, expect, it} from 'vitest'
import {FLEET_EVERY_MS, Hub, type HubProject, type Subscriber} from '../../src/dashboard/hub.js'
import type {Timers} from '../../src/dashboard/watch.js'
import type {FleetView} from '../../src/operator/fleet.js'
import type {ProjectRead} from '../../src/dashboard/project-view.js'

/** Timers on a clock the test moves; `pending` is what is scheduled right now. */
class FakeTimers implements Timers {
  now = Date.parse('2026-11-27T01:00:00Z')
  #next = 1
  #queue = new Map<number, {at: number; fn: () => void}>()
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.#next++
    this.#queue.set(id, {at: this.now + ms, fn})
    return id
  }
  clearTimeout(h: unknown): void {
    this.#queue.delete(h as number)
  }
  get pending(): number {
    return this.#queue.size
  }
  /** moves the clock by `ms`, running what falls due in order, letting promise chains settle between */
  async advance(ms: number): Promise<void> {
    const end = this.now + ms
    for (;;) {
      await flush()
      const due = [...this.#queue.entries()].filter(([, t]) => t.at <= end).sort((a, b) => a[1].at - b[1].at)[0]
      if (!due) break
      this.#queue.delete(due[0])
      this.now = due[1].at
      due[1].fn()
    }
    this.now = end
    await flush()
  }
}

/** lets every queued promise reaction and I/O callback run */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve))

function view(i: number, n: number): ProjectRead {
  return {
    view: {index: i, name: `p${i}`, root: `/p${i}`, error: null, run: null, slots: [], run_beads: [], queue: null, events: [], night: {runs: 0, cycles: n, closed: 0, failed: 0, tokens: 0}},
    report: null,
  }
}

const FLEET: FleetView = {remote: 'origin', base: 'main', tip: 'a'.repeat(40), counts: {total: 1, open: 1, claimed: 0, in_progress: 0, closed: 0, blocked: 0}, claims: [], hosts: [], lease_s: 300, pull_requests: []}

function setup(projects = 2) {
  const timers = new FakeTimers()
  const changes: Array<() => void> = []
  let watchers = 0
  const content = new Array<number>(projects).fill(0)
  const reads = new Array<number>(projects).fill(0)
  let fleetReads = 0
  const ps: HubProject[] = content.map((_, i) => ({
    root: `/p${i}`,
    read: async () => {
      reads[i]++
      return view(i, content[i])
    },
  }))
  const hub = new Hub({
    projects: ps,
    watch: (_root, onChange) => {
      watchers++
      changes.push(onChange)
      return {close() {}}
    },
    remote: 'origin',
    fleetRead: async () => {
      fleetReads++
      return FLEET
    },
    timers,
    now: () => new Date(timers.now),
  })
  return {hub, timers, changes, content, reads, counts: () => ({watchers, fleetReads, reads: reads.reduce((a, b) => a + b, 0)})}
}

/** n open pages; each counts what it was sent */
function pages(hub: Hub, n: number) {
  const got: string[][] = []
  const offs: Array<() => void> = []
  for (let i = 0; i < n; i++) {
    const mine: string[] = []
    got.push(mine)
    const s: Subscriber = {send: (t) => void mine.push(t)}
    offs.push(hub.subscribe(s))
  }
  return {got, close: () => offs.forEach((f) => f())}
}

/** what one scenario costs with `n` pages: 59 s with two file changes (a read due at 60 s would be half done) */
async function minuteWith(n: number) {
  const t = setup()
  await t.hub.start()
  const before = t.counts()
  const p = pages(t.hub, n)
  t.content[0]++
  t.changes[0]()
  await t.timers.advance(5_000)
  t.content[1]++
  t.changes[1]()
  await t.timers.advance(54_000)
  const after = t.counts()
  p.close()
  const pendingAfterClose = t.timers.pending
  t.hub.close()
  return {watchers: after.watchers, reads: after.reads - before.reads, fleetReads: after.fleetReads - before.fleetReads, sent: p.got, pendingAfterClose, broadcasts: t.hub.counters.broadcasts}
}

describe('dashboard hub: 20 open pages cost what one does', () => {
  it('counts watchers, project reads, fleet reads and broadcasts with 1 page and with 20', async () => {
    const one = await minuteWith(1)
    const twenty = await minuteWith(20)
    // one watcher per project (2 projects), made at start, not per page
    expect(one.watchers).toBe(2)
    expect(twenty.watchers).toBe(2)
    // one read of every project per change: 2 changes × 2 projects
    expect(one.reads).toBe(4)
    expect(twenty.reads).toBe(one.reads)
    // the fleet: one read when the first page opens, then one per 10 s: 1 + 5 in 59 s, per project
    expect(one.fleetReads).toBe(2 * (1 + Math.floor(59_000 / FLEET_EVERY_MS)))
    expect(twenty.fleetReads).toBe(one.fleetReads)
    // the same broadcasts, each delivered to every page
    expect(twenty.broadcasts).toBe(one.broadcasts)
    for (const got of twenty.sent) expect(got).toEqual(one.sent[0])
    // with the last page gone nothing is scheduled (no fleet reads, no heartbeat)
    expect(one.pendingAfterClose).toBe(0)
    expect(twenty.pendingAfterClose).toBe(0)
  })

  it('with no page open, nothing runs: no fleet read, no timer; a change is read once', async () => {
    const t = setup(1)
    await t.hub.start()
    expect(t.timers.pending).toBe(0)
    await t.timers.advance(600_000)
    expect(t.counts()).toEqual({watchers: 1, fleetReads: 0, reads: 1})
    t.content[0]++
    t.changes[0]()
    await t.timers.advance(1)
    expect(t.counts().reads).toBe(2)
    t.hub.close()
  })

  it('an unchanged state is not sent again; a page that opens gets the state at once', async () => {
    const t = setup(1)
    await t.hub.start()
    const p = pages(t.hub, 1)
    await t.timers.advance(1)
    const sentBefore = p.got[0].filter((x) => x !== '').length
    t.changes[0]() // a file event with no change in what the page shows
    await t.timers.advance(1)
    expect(p.got[0].filter((x) => x !== '').length).toBe(sentBefore)
    const late = pages(t.hub, 1)
    expect(JSON.parse(late.got[0][0]).projects[0].name).toBe('p0')
    p.close()
    late.close()
    t.hub.close()
  })

  it('pages coming and going do not add fleet reads', async () => {
    const t = setup(1)
    await t.hub.start()
    for (let i = 0; i < 10; i++) {
      const p = pages(t.hub, 1)
      await t.timers.advance(500)
      p.close()
    }
    expect(t.counts().fleetReads).toBe(1)
    t.hub.close()
  })
})

describe('dashboard hub: a project that cannot be read', () => {
  it('says so on the page and goes on; the next good read clears it', async () => {
    const timers = new FakeTimers()
    let fail = false
    let onChange = () => {}
    const hub = new Hub({
      projects: [
        {
          root: '/p0',
          read: async () => {
            if (fail) throw new Error('/p0/.ddx/helix.pid is not a regular file')
            return view(0, 1)
          },
        },
      ],
      watch: (_r, f) => ((onChange = f), {close() {}}),
      timers,
      now: () => new Date(timers.now),
    })
    await hub.start()
    const got: string[] = []
    const off = hub.subscribe({send: (t) => void (t && got.push(t))})
    fail = true
    onChange()
    await timers.advance(1)
    expect(JSON.parse(got.at(-1)!).projects[0]).toMatchObject({name: 'p0', error: 'cannot read the project: /p0/.ddx/helix.pid is not a regular file'})
    fail = false
    onChange()
    await timers.advance(1)
    expect(JSON.parse(got.at(-1)!).projects[0].error).toBeNull()
    off()
    hub.close()
  })
})

describe('dashboard hub: a live run is re-read without a file change', () => {
  it('every 15 s while a page is open (a run killed with -9 changes no file); never without a page or a live run', async () => {
    const timers = new FakeTimers()
    let live = true
    let reads = 0
    const hub = new Hub({
      projects: [
        {
          root: '/p0',
          read: async () => {
            reads++
            const r = view(0, 0)
            r.view.run = live ? ({live: true} as NonNullable<ProjectRead['view']['run']>) : null
            return r
          },
        },
      ],
      watch: () => ({close() {}}),
      timers,
      now: () => new Date(timers.now),
    })
    await hub.start()
    await timers.advance(60_000)
    expect(reads).toBe(1) // no page: nothing
    const off = hub.subscribe({send: () => {}})
    await timers.advance(45_000)
    expect(reads).toBe(4)
    live = false // the next read finds the run gone, and the re-reads stop
    await timers.advance(15_000)
    await timers.advance(600_000)
    expect(reads).toBe(5)
    expect(timers.pending).toBe(1) // the heartbeat only
    off()
    expect(timers.pending).toBe(0)
    hub.close()
  })
})
