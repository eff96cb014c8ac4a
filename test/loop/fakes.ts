import {PLAIN_VERDICT, type ActionName, type AgentSpec, type AgentVerdict, type DispatchEnd, type DispatchResult, type SessionLogLike} from '../../src/agents/types.js'
import type {DispatchArgs, LoopDeps, LoopLanding, LoopOptions, NewBeadInput, NotifyEvent} from '../../src/loop/ports.js'
import {emptyRunState} from '../../src/state/run-state.js'
import type {RunHistoryRecord, RunState} from '../../src/state/types.js'
import type {Bead, TrackerSnapshot} from '../../src/tracker/types.js'
import {HelixError} from '../../src/util/errors.js'

export function snapOf(beads: Bead[]): TrackerSnapshot {
  const copy = beads.map((b) => structuredClone(b))
  return {beads: copy, byId: new Map(copy.map((b) => [b.id, b])), duplicateIds: []}
}

export class FakeTracker {
  beads: Bead[]
  calls: string[] = []
  claimConflicts = new Set<string>()
  nextId = 1
  constructor(beads: Bead[]) {
    this.beads = beads.map((b) => ({status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z', ...b}))
  }
  get(id: string): Bead {
    const b = this.beads.find((x) => x.id === id)
    if (!b) throw new Error(`no bead ${id}`)
    return b
  }
  reads = 0
  async read() {
    if (++this.reads > 500) throw new Error('runaway loop: too many tracker reads')
    return snapOf(this.beads)
  }
  async staleClaims() {
    return new Set<string>()
  }
  async claim(id: string) {
    this.calls.push(`claim ${id}`)
    if (this.claimConflicts.has(id)) return {ok: false as const, message: 'already claimed by other (pid 1)'}
    const b = this.get(id)
    b.status = 'in_progress'
    b['claim-token'] = `tok-${id}`
    b.owner = 'helix'
    return {ok: true as const, token: `tok-${id}`}
  }
  async unclaim(id: string) {
    this.calls.push(`unclaim ${id}`)
    const b = this.get(id)
    if (b.status === 'closed') return
    b.status = 'open'
    delete b['claim-token']
    delete b.owner
  }
  async close(id: string) {
    this.calls.push(`close ${id}`)
    this.get(id).status = 'closed'
  }
  async reopen(id: string, reason: string) {
    this.calls.push(`reopen ${id}`)
    const b = this.get(id)
    b.status = 'open'
    b.notes = b.notes ? `${b.notes}\n\n${reason}` : reason
  }
  async appendNote(id: string, text: string) {
    this.calls.push(`note ${id}`)
    const b = this.get(id)
    b.notes = b.notes ? `${b.notes}\n\n${text}` : text
  }
  async addLabel(id: string, label: string) {
    this.calls.push(`label ${id} ${label}`)
    const b = this.get(id)
    b.labels = [...(b.labels ?? []), label]
  }
  async setFields(id: string, fields: Record<string, unknown>) {
    this.calls.push(`set ${id} ${JSON.stringify(fields)}`)
    Object.assign(this.get(id), fields)
  }
  async addSpend(id: string, tokens: number, costUsd: number) {
    this.calls.push(`spend ${id} ${tokens}`)
    const b = this.get(id)
    b['helix-tokens'] = Number(b['helix-tokens'] ?? 0) + tokens
    if (costUsd > 0) b['helix-cost'] = Number(b['helix-cost'] ?? 0) + costUsd
  }
  async create(input: NewBeadInput) {
    const id = `new-${this.nextId++}`
    this.calls.push(`create ${id} ${input.title}`)
    this.beads.push({id, status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-02T00:00:00Z', ...input})
    return id
  }
}

export interface AgentCall {
  action: ActionName
  agent: string
  beadId?: string
  claimToken?: string
  prompt: string
  cwd?: string
  env?: Record<string, string>
  slot?: number
  stallTimeoutSec?: number
  signal?: AbortSignal
}

/** what a fake agent call returns: facts of a DispatchResult, how it ended (default `exited`), and verdict fields */
export interface FakeOutcome {
  rc?: number
  text?: string
  tokens?: number
  durationMs?: number
  end?: DispatchEnd
  verdict?: Partial<AgentVerdict>
}

export type Behaviour = (call: AgentCall, tracker: FakeTracker) => FakeOutcome | void | Promise<FakeOutcome | void>

export class FakeLog implements SessionLogLike {
  path = '/abs/.helix-logs/helix-20260101-000000.log'
  lines = 0
  events: string[] = []
  /** every event with its fields */
  records: Array<{msg: string; fields?: Record<string, unknown>; level?: string}> = []
  event(msg: string, fields?: Record<string, unknown>, level?: string) {
    this.lines++
    this.events.push(msg)
    this.records.push({msg, fields, level})
  }
  agentLine() {
    this.lines++
  }
  close() {}
}

export interface Harness {
  deps: LoopDeps
  tracker: FakeTracker
  calls: AgentCall[]
  sleeps: number[]
  normal: string[]
  summary: string[]
  both: string[]
  stdout: string[]
  states: RunState[]
  contexts: Array<string | null>
  recoveries: number
  mutexReleased: boolean
  log: FakeLog
  clock: {t: number}
  reports: number
  events: NotifyEvent[]
  history: RunHistoryRecord[]
  /** log opened (the run started writing) */
  logOpened: boolean
  /** all terminal lines as normal mode would show them */
  normalView(): string[]
  summaryView(): string[]
}

export function harness(
  beads: Bead[],
  behaviour: Partial<Record<ActionName, Behaviour>>,
  extra: {
    held?: {pid: number; started: string}
    prevState?: RunState
    acceptance?: Record<string, number>
    changed?: {lines: number; files: number} | null
    recover?: () => string[]
    env?: NodeJS.ProcessEnv
    existing?: string[]
    missingAgent?: boolean
    landing?: LoopLanding
    /** a sleep that an abort ends early (the real one does) */
    abortableSleep?: boolean
    /** commits every cycle makes in the checkout (gates.commitsSince) */
    commits?: string[]
    /** output lines every implementation dispatch prints (through onLine) */
    outputLines?: string[]
    /** fake-clock milliseconds before each of those lines */
    outputStepMs?: number
    /** the implementation agent's name (a command agent's path) */
    implName?: string
  } = {},
): Harness {
  const tracker = new FakeTracker(beads)
  const clock = {t: Date.parse('2026-03-01T10:00:00Z')}
  const log = new FakeLog()
  const impl: AgentSpec = {kind: 'codex', name: extra.implName ?? 'codex', path: '/bin/codex'}
  const review: AgentSpec = {kind: 'claude', name: 'claude', path: '/bin/claude'}
  const h: Harness = {
    tracker,
    calls: [],
    sleeps: [],
    normal: [],
    summary: [],
    both: [],
    stdout: [],
    states: [],
    contexts: [],
    recoveries: 0,
    mutexReleased: false,
    log,
    clock,
    reports: 0,
    events: [],
    history: [],
    logOpened: false,
    normalView: () => hh.normalLines,
    summaryView: () => hh.summaryLines,
    deps: undefined as unknown as LoopDeps,
  } as unknown as Harness
  const hh = h as Harness & {normalLines: string[]; summaryLines: string[]}
  hh.normalLines = []
  hh.summaryLines = []
  let saved: RunState | null = extra.prevState ?? null
  h.deps = {
    tracker,
    agents: {
      impl,
      review,
      check() {
        if (extra.missingAgent) throw new HelixError("agent 'codex' not found on PATH", 1)
      },
      async prompt(action, ctx) {
        return `${action} prompt ${ctx.beadId ?? ctx.scope ?? ''}${ctx.batchIds ? ' BATCH MODE ' + ctx.batchIds.join(',') : ''}${ctx.contextMd?.includes('Earlier work') || ctx.contextMd?.includes('land check failed') ? '\n' + ctx.contextMd : ''}`
      },
      async dispatch(args: DispatchArgs): Promise<DispatchResult> {
        const call: AgentCall = {
          action: args.action,
          agent: args.agent.name,
          beadId: args.beadId,
          claimToken: args.claimToken,
          prompt: args.prompt,
          cwd: args.cwd,
          env: args.env,
          slot: args.slot,
          stallTimeoutSec: args.stallTimeoutSec,
          signal: args.signal,
        }
        h.calls.push(call)
        const first = log.lines + 1
        log.agentLine()
        if (args.action === 'implementation') {
          for (const l of extra.outputLines ?? []) {
            clock.t += extra.outputStepMs ?? 0
            args.onLine?.(l)
          }
        }
        const fn = behaviour[args.action]
        const r = (fn ? await fn(call, tracker) : undefined) ?? {}
        clock.t += 1000
        const {end = {end: 'exited'}, verdict, ...facts} = r
        return {rc: 0, text: '', tokens: 10, durationMs: 1000, logRange: {first, last: log.lines}, argv: [], ...facts, ...end, verdict: {...PLAIN_VERDICT, ...verdict}}
      },
      describe(agent, action) {
        return `${agent.path} ${action}`
      },
    },
    out: {
      normal: (l) => {
        h.normal.push(l)
        hh.normalLines.push(l)
      },
      summary: (l) => {
        h.summary.push(l)
        hh.summaryLines.push(l)
      },
      both: (l) => {
        h.both.push(l)
        hh.normalLines.push(l)
        hh.summaryLines.push(l)
      },
      agent: () => {},
      stdout: (t) => h.stdout.push(t),
      attach: () => {},
    },
    gates: {
      async acceptanceScripts() {
        return Object.keys(extra.acceptance ?? {})
      },
      async runScript(f) {
        return extra.acceptance?.[f] ?? 0
      },
      async mark() {
        return 'HEAD0'
      },
      async changedSince() {
        return extra.changed === undefined ? {lines: 500, files: 1} : extra.changed
      },
      async exists(f) {
        return (extra.existing ?? []).includes(f)
      },
      async head() {
        return extra.commits ? 'h0' : null
      },
      async commitsSince() {
        return extra.commits ?? []
      },
    },
    mutex: {
      acquire: () => (extra.held ? {ok: false as const, holder: extra.held} : {ok: true as const}),
      release: () => {
        h.mutexReleased = true
      },
    },
    // like state/run-state.ts: save keeps the larger denied count already on disk;
    // update is the locked read-modify-write the ledger and the mutex use
    state: {
      async load() {
        return saved ? structuredClone(saved) : null
      },
      async save(s) {
        if (saved && saved.parallel_run_denied_count > (s.parallel_run_denied_count ?? 0)) s.parallel_run_denied_count = saved.parallel_run_denied_count
        saved = structuredClone(s)
        h.states.push(saved)
      },
      async update(fn) {
        const next = fn(saved ? structuredClone(saved) : emptyRunState(new Date(clock.t)))
        saved = structuredClone(next)
        h.states.push(saved)
        return structuredClone(next)
      },
    },
    clock: {now: () => new Date(clock.t)},
    async sleep(ms, signal) {
      h.sleeps.push(ms)
      if (extra.abortableSleep && signal) {
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, {once: true}))
        return
      }
      clock.t += ms
    },
    async openLog() {
      h.logOpened = true
      return log
    },
    async recoverOrphans(say) {
      h.recoveries++
      const ids = extra.recover ? extra.recover() : []
      for (const id of ids) await tracker.unclaim(id)
      if (ids.length) say(`helix: recovered ${ids.length} orphaned issue(s)`)
      return {recovered: ids}
    },
    async context(_snap, focus) {
      h.contexts.push(focus)
      return '# HELIX Execution Context'
    },
    async blockerReport() {
      h.reports++
      return '/abs/.helix-logs/blockers-x.md'
    },
    pid: 4242,
    env: extra.env ?? {},
    notify: {
      async send(e) {
        h.events.push(e)
      },
    },
    history: {
      async append(r) {
        h.history.push(r)
      },
    },
    ...(extra.landing ? {landing: extra.landing, trackerDir: '/abs/.ddx'} : {}),
  }
  return h
}

export function opts(o: Partial<LoopOptions> = {}): LoopOptions {
  return {maxCycles: 0, summary: false, reviewEvery: 0, reviewThreshold: 100, autoReview: false, autoAlign: false, dryRun: false, ...o}
}

export const closeIt = (c: AgentCall, t: FakeTracker): void => {
  if (c.beadId) t.get(c.beadId).status = 'closed'
}

export const check = (...codes: string[]): Behaviour => {
  let i = 0
  return () => ({text: `NEXT_ACTION: ${codes[Math.min(i++, codes.length - 1)]}`})
}

export function lastState(h: Harness): RunState {
  return h.states[h.states.length - 1] ?? emptyRunState()
}

export {FakeLanding} from './fake-landing.js'
