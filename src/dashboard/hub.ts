/**
 * The dashboard's one shared state (SPEC 22.1, cost): one watcher per project, one
 * recomputation per change, one fleet read per 10 s per remote — however many pages
 * are open. Pages subscribe and are sent the state (JSON) when it changes; an idle
 * page costs a rare heartbeat and nothing else.
 */
import type {FleetView} from '../operator/fleet.js'
import type {History} from '../report/summary.js'
import type {Report} from '../report/summary.js'
import type {ProjectRead} from './project-view.js'
import {realTimers, type Timers, type WatchFactory} from './watch.js'
import {sanitize} from '../util/sanitize.js'
import type {DashboardState, FleetPane, ProjectView, PullRequestRow} from './types.js'

/** The fleet's remote state is read at most this often, for every page together. */
export const FLEET_EVERY_MS = 10_000
/**
 * While a run is live and a page is open, the projects are read again this often even
 * without a file change: a run killed with -9 changes no file, and backoffs and claims
 * expire with time alone.
 */
export const LIVE_RECHECK_MS = 15_000
/** An SSE comment this often keeps proxies and browsers from timing the stream out. */
export const HEARTBEAT_MS = 120_000

/** The longest string the page is sent (a title, a reason, an output line); longer ones end in `…`. */
export const PAGE_TEXT_MAX = 1000

/**
 * Every string of the page's state, as a terminal line gets it (SPEC 13.5): control
 * characters, bidi controls and line separators made visible, so a title cannot
 * reverse the text around it or hide an escape sequence; and cut to `PAGE_TEXT_MAX`,
 * so a 1 MB title is not sent to every page on every change.
 */
function pageText(_key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value
  const clean = sanitize(value)
  return clean.length > PAGE_TEXT_MAX ? `${clean.slice(0, PAGE_TEXT_MAX - 1).replace(/[\ud800-\udbff]$/, '')}…` : clean
}

export interface HubProject {
  root: string
  read(now: Date): Promise<ProjectRead>
  /** `--remote`: the fleet's run records from the last fleet read (the night then covers every host) */
  setFleetRuns?(h: History): void
}

export interface HubOptions {
  projects: HubProject[]
  watch: WatchFactory
  /** `--remote NAME`: each project's fleet */
  remote?: string
  fleetRead?: (root: string) => Promise<FleetView>
  /** `--remote`: every host's run records (refs/helix/runs/*), read with the fleet */
  fleetRuns?: (root: string) => Promise<{key: string; history: History} | null>
  /** pull requests awaiting merge (SPEC 20.5); empty until PR landing provides them */
  pullRequests?: (root: string) => Promise<PullRequestRow[]>
  timers?: Timers
  now?: () => Date
}

export interface Subscriber {
  send(text: string): void
}

export interface HubCounters {
  watchers: number
  reads: number
  fleetReads: number
  broadcasts: number
}

interface Slot {
  view: ProjectView | null
  report: Report | null
  chartKey: string
  fleet: FleetPane | null
  /** the fleet's run-record refs last read (their shas) */
  fleetRunsKey?: string
}

export class Hub {
  readonly counters: HubCounters = {watchers: 0, reads: 0, fleetReads: 0, broadcasts: 0}
  #subs = new Set<Subscriber>()
  #slots: Slot[]
  #watches: Array<{close(): void}> = []
  #version = 0
  #json = ''
  #timers: Timers
  #now: () => Date
  #fleetTimer: unknown = null
  #heartbeat: unknown = null
  #recheck: unknown = null
  #reading: Promise<void> | null = null
  #again = false
  #closed = false

  constructor(readonly o: HubOptions) {
    this.#timers = o.timers ?? realTimers
    this.#now = o.now ?? (() => new Date())
    this.#slots = o.projects.map(() => ({view: null, report: null, chartKey: '', fleet: o.remote ? {remote: o.remote, view: null, error: null, read_at: null, pull_requests: []} : null}))
  }

  /** Reads every project once and starts the watchers. */
  async start(): Promise<void> {
    await this.refresh()
    for (const p of this.o.projects) {
      this.#watches.push(this.o.watch(p.root, () => void this.refresh()))
      this.counters.watchers++
    }
  }

  /** The state as the page gets it (the JSON text). */
  get json(): string {
    return this.#json
  }

  report(index: number): Report | null {
    return this.#slots[index]?.report ?? null
  }

  get projectCount(): number {
    return this.#slots.length
  }

  get subscribers(): number {
    return this.#subs.size
  }

  subscribe(s: Subscriber): () => void {
    this.#subs.add(s)
    s.send(this.#json)
    if (this.#subs.size === 1) this.#wake()
    return () => {
      this.#subs.delete(s)
      if (this.#subs.size === 0) this.#sleep()
    }
  }

  /** Re-reads every project (one read at a time; changes during a read cause one more). */
  refresh(): Promise<void> {
    if (this.#reading) {
      this.#again = true
      return this.#reading
    }
    this.#reading = (async () => {
      do {
        this.#again = false
        const now = this.#now()
        for (const [i, p] of this.o.projects.entries()) {
          this.counters.reads++
          const slot = this.#slots[i]
          let r: ProjectRead
          try {
            r = await p.read(now)
          } catch (error) {
            // a project that cannot be read this time (a FIFO for a pid file, a vanished
            // directory) says so on the page; the server and the other projects go on
            const prev = slot.view
            r = {
              view: {index: i, name: p.root.split('/').pop() ?? p.root, root: p.root, run: null, slots: [], run_beads: [], queue: null, events: [], night: {runs: 0, cycles: 0, closed: 0, failed: 0, tokens: 0}, ...(prev ?? {}), error: `cannot read the project: ${(error as Error).message}`},
              report: slot.report,
            }
          }
          // the charts change only when the night's cycles do: the page reloads them then
          const key = r.report ? `${r.report.cycles.length}:${r.report.cycles.at(-1)?.ended_at ?? ''}:${r.report.totals.closed}` : ''
          const chartVersion = key === slot.chartKey ? (slot.view?.chart_version ?? 0) : (slot.view?.chart_version ?? 0) + 1
          slot.chartKey = key
          slot.report = r.report
          slot.view = {...r.view, chart_version: chartVersion, fleet: slot.fleet}
        }
        this.#publish()
        this.#scheduleRecheck()
      } while (this.#again && !this.#closed)
    })().finally(() => {
      this.#reading = null
    })
    return this.#reading
  }

  #publish(): void {
    const projects = this.#slots.map((s) => ({...s.view!, fleet: s.fleet}))
    const body = JSON.stringify(projects, pageText)
    if (body === this.#lastBody) return
    this.#lastBody = body
    this.#version++
    const head: Omit<DashboardState, 'projects'> = {version: this.#version, generated_at: this.#now().toISOString()}
    this.#json = `${JSON.stringify(head).slice(0, -1)},"projects":${body}}`
    this.counters.broadcasts++
    for (const s of this.#subs) s.send(this.#json)
  }

  #lastBody = ''

  /** one pending re-read while a run is live and someone looks; none otherwise */
  #scheduleRecheck(): void {
    const live = this.#subs.size > 0 && this.#slots.some((s) => s.view?.run?.live)
    if (live && this.#recheck === null && !this.#closed) {
      this.#recheck = this.#timers.setTimeout(() => {
        this.#recheck = null
        void this.refresh()
      }, LIVE_RECHECK_MS)
    }
  }

  /** The first page opened: fleet reads and the heartbeat start (nothing runs for no page). */
  #wake(): void {
    if (this.o.remote && this.o.fleetRead && this.#fleetTimer === null) {
      const tick = () => {
        this.#fleetTimer = this.#timers.setTimeout(() => {
          void this.readFleet().finally(() => {
            if (this.#fleetTimer !== null && !this.#closed) tick()
          })
        }, FLEET_EVERY_MS)
      }
      // read now unless the last read is recent (pages coming and going do not add reads)
      const last = Math.max(0, ...this.#slots.map((s) => (s.fleet?.read_at ? Date.parse(s.fleet.read_at) : 0)))
      if (this.#now().getTime() - last >= FLEET_EVERY_MS) void this.readFleet()
      tick()
    }
    this.#scheduleRecheck()
    if (this.#heartbeat === null) {
      const beat = () => {
        this.#heartbeat = this.#timers.setTimeout(() => {
          for (const s of this.#subs) s.send('')
          beat()
        }, HEARTBEAT_MS)
      }
      beat()
    }
  }

  #sleep(): void {
    if (this.#fleetTimer !== null) this.#timers.clearTimeout(this.#fleetTimer)
    if (this.#heartbeat !== null) this.#timers.clearTimeout(this.#heartbeat)
    if (this.#recheck !== null) this.#timers.clearTimeout(this.#recheck)
    this.#fleetTimer = null
    this.#heartbeat = null
    this.#recheck = null
  }

  /** One read of every project's fleet, shared by every page. */
  async readFleet(): Promise<void> {
    if (!this.o.remote || !this.o.fleetRead) return
    let moved = false
    for (const [i, p] of this.o.projects.entries()) {
      const slot = this.#slots[i]
      const pane = slot.fleet!
      this.counters.fleetReads++
      try {
        const view = await this.o.fleetRead(p.root)
        // the fleet view already carries its pull requests (status --remote's rows, SPEC 20.5)
        const prs = this.o.pullRequests
          ? await this.o.pullRequests(p.root)
          : (view.pull_requests ?? []).map((r) => ({
              bead: r.bead,
              url: r.url,
              age_s: r.age_s,
              checks: r.checks === 'pending' || r.checks === 'passing' || r.checks === 'failing' ? r.checks : null,
              mergeable: r.mergeable === 'unknown' ? null : r.mergeable === 'mergeable',
            }))
        slot.fleet = {...pane, view, error: null, read_at: this.#now().toISOString(), pull_requests: prs}
        // the fleet's night: re-read the project only when some host's records moved
        if (this.o.fleetRuns && p.setFleetRuns) {
          // records that cannot be read this time leave the night as it was
          const runs = await this.o.fleetRuns(p.root).catch(() => null)
          if (runs && runs.key !== slot.fleetRunsKey) {
            slot.fleetRunsKey = runs.key
            p.setFleetRuns(runs.history)
            moved = true
          }
        }
      } catch (error) {
        slot.fleet = {...pane, error: (error as Error).message, read_at: this.#now().toISOString()}
      }
    }
    if (moved) await this.refresh()
    else if (this.#slots.every((s) => s.view)) this.#publish()
  }

  close(): void {
    this.#closed = true
    this.#sleep()
    for (const w of this.#watches) w.close()
    this.#watches = []
    this.#subs.clear()
  }
}
