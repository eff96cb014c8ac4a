/**
 * The status model (SPEC 7.1): one plain object computed from a tracker snapshot,
 * the run-state file and the pid file. Pure: every input (including the clock and
 * the claim liveness verdicts) is passed in, so renderers and tests need no disk.
 */
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import type {RunState} from '../state/types.js'
import {blockedNoteReason, labelledBlocked, type StatusCounts} from '../tracker/queries.js'
import {claimAgeSec} from '../tracker/liveness.js'

/** The tracker's own counts (`helix tracker status`), shown under `Tracker:`. */
export type TrackerCounts = StatusCounts

export interface PidInfo {
  pid: number
  started: string
}

export interface ClaimedBead {
  id: string
  title: string
  owner: string | null
  pid: number | null
  machine: string | null
  claimed_at: string | null
  claim_age_seconds: number | null
  /** from SPEC 2.4 liveness: false when the claim is stale (orphaned) */
  live: boolean
}

export type ParkedKind = 'backoff' | 'skipped' | 'blocked-label' | 'blocked-status' | 'waiting-deps'

export interface ParkedBead {
  id: string
  title: string
  kind: ParkedKind
  reason: string
  /** ISO time the bead becomes selectable again, when that is known (backoff) */
  next_eligible: string | null
  /** seconds since the bead last changed (its updated_at, else created_at) */
  age_seconds: number | null
}

/** SPEC 16.4: the active run's progress. */
export interface RunProgress {
  completed: number
  attempted: number
  /** --max-cycles of the run; null = unlimited (∞) */
  max_cycles: number | null
  tokens: number
  cost_usd: number | null
  elapsed_s: number | null
  mean_cycle_s: number | null
  last_cycle_s: number | null
  /** SPEC 21.2: the run confines its agents (`--sandbox`) */
  sandboxed?: boolean
}

/** where the queue stands, in beads (not cycles), and when it should be done. */
export interface BeadProgress {
  closed: number
  total: number
  /** beads not closed (blocked ones included: they are left, too) */
  left: number
  /** open beads that only wait on unclosed dependencies: they will come */
  waiting: number
  /** beads helix gave up on or a person parked (label/status blocked): they need a human */
  blocked: number
  /** seconds until the workable beads are done at the run's mean cycle time over its workers; null without a mean */
  eta_s: number | null
}

/** One in-flight bead (a busy worker slot, or the single worker's current bead). */
export interface InFlight {
  slot: number
  bead: string
  title: string
  elapsed_s: number | null
  timeout_s: number | null
  last_output: string | null
  /** the slot's agent pid while its dispatch runs (run-state workers[].pid), else null */
  pid: number | null
  /** run-state workers[] fields, null when unknown (SPEC 15.4: --json has the same) */
  attempt?: number | null
  started_at?: string | null
  worktree?: string | null
  branch?: string | null
}

export interface StatusModel {
  /** closed/total, left, waiting vs blocked, ETA (ETA only while a run is active) */
  beads: BeadProgress
  /** the project's .helix/config.json (what the next `helix run` uses), {} when none */
  config: Record<string, string | number | boolean | string[]>
  /** SPEC 16.4 (null without an active run) */
  progress: RunProgress | null
  in_flight: InFlight[]
  paused_until: string | null
  pause_reason: string | null
  last_output: string | null
  now: string
  tracker: TrackerCounts
  /** the live run holding .ddx/helix.pid, or null */
  active: {pid: number; started: string; log: string | null} | null
  /** pid of a dead run whose pid file was found (and removed) while computing this model */
  stalePid: number | null
  /** why that pid file was stale, in words: set whenever stalePid is (the words of a bare pid when not given) */
  staleWhy: string | null
  /** `.ddx/run-state.json` is there but unreadable: why, in words (runStateProblem) */
  runStateProblem: string | null
  current_cycle: number | null
  /** the active run's run-state phase (starting, running, implementing, backoff, check, reviewing, …) */
  phase: string | null
  running_bead: {id: string; title: string; claim_age_seconds: number | null; started_at: string | null} | null
  focused_epic: {id: string; title: string} | null
  claimed: ClaimedBead[]
  parked: ParkedBead[]
  injected_supervisory: NonNullable<RunState['injected_supervisory']>
  last_stop_reason: string | null
  lastRun: {
    started_at: string | null
    ended_at: string | null
    attempted_cycles: number
    completed_cycles: number
    total_tokens: number
    stop_reason: string | null
    /** the run's stop message (agent failure line, quota reset…) */
    stop_message?: string | null
  } | null
  run: RunState | null
}

export interface StatusInputs {
  snap: TrackerSnapshot
  counts: TrackerCounts
  /** open beads waiting on unclosed or missing dependencies (ids they wait on) */
  waiting: Array<{bead: Bead; waitingOn: string[]}>
  /** ids of in_progress beads whose claim is stale (SPEC 2.4) */
  staleClaims: Set<string>
  runState: RunState | null
  /** the pid file when its pid is alive */
  livePid: PidInfo | null
  stalePid?: number | null
  staleWhy?: string | null
  runStateProblem?: string | null
  now: Date
  config?: Record<string, string | number | boolean | string[]>
}

function ageSeconds(iso: unknown, now: Date): number | null {
  if (typeof iso !== 'string' || !iso) return null
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return null
  return Math.max(0, Math.floor((now.getTime() - t) / 1000))
}

function titleOf(b: Bead | undefined): string {
  return typeof b?.title === 'string' ? b.title : ''
}

function statusOf(b: Bead): string {
  return typeof b.status === 'string' && b.status ? b.status : 'open'
}

function numOrNull(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v)
  return null
}

const DONE = new Set(['closed', 'cancelled'])

export function buildStatusModel(input: StatusInputs): StatusModel {
  const {snap, counts, waiting, staleClaims, runState, livePid, now} = input
  // run-state belongs to the live run only when it names the same pid
  const rs = runState
  const runIsLive = Boolean(livePid && rs && rs.pid === livePid.pid)

  const active = livePid ? {pid: livePid.pid, started: livePid.started, log: runIsLive ? rs!.log ?? null : null} : null

  let running_bead: StatusModel['running_bead'] = null
  let focused_epic: StatusModel['focused_epic'] = null
  if (runIsLive && rs) {
    if (rs.current_bead) {
      const b = snap.byId.get(rs.current_bead)
      running_bead = {
        id: rs.current_bead,
        title: titleOf(b),
        claim_age_seconds: ageSeconds(b?.['claimed-at'] ?? rs.current_bead_started_at, now),
        started_at: rs.current_bead_started_at ?? null,
      }
    }
    if (rs.focused_epic) focused_epic = {id: rs.focused_epic, title: titleOf(snap.byId.get(rs.focused_epic))}
  }

  const claimed: ClaimedBead[] = []
  for (const b of snap.beads) {
    if (statusOf(b) !== 'in_progress') continue
    const claimedAt = typeof b['claimed-at'] === 'string' ? (b['claimed-at'] as string) : null
    claimed.push({
      id: b.id,
      title: titleOf(b),
      owner: typeof b.owner === 'string' && b.owner ? b.owner : null,
      pid: numOrNull(b['claimed-pid']),
      machine: typeof b['claimed-machine'] === 'string' ? (b['claimed-machine'] as string) : null,
      claimed_at: claimedAt,
      claim_age_seconds: claimAgeSec(b, now), // a claimed-at in the future is no evidence of age (SPEC 13.3)
      live: !staleClaims.has(b.id),
    })
  }

  // Parked: every not-done bead that is not selectable for a reason an operator can act on.
  const parked: ParkedBead[] = []
  const seen = new Set<string>()
  const park = (b: Bead | undefined, id: string, kind: ParkedKind, reason: string, next: string | null) => {
    if (seen.has(id)) return
    if (b && DONE.has(statusOf(b))) return
    seen.add(id)
    parked.push({
      id,
      title: titleOf(b),
      kind,
      reason,
      next_eligible: next,
      age_seconds: ageSeconds(b?.updated_at ?? b?.created_at, now),
    })
  }
  if (runIsLive && rs) {
    const backoff = Object.entries(rs.backoff_until ?? {})
      .filter(([, until]) => Date.parse(until) > now.getTime())
      .sort((a, b) => Date.parse(a[1]) - Date.parse(b[1]))
    for (const [id, until] of backoff) {
      const n = rs.attempts?.[id] ?? 0
      park(snap.byId.get(id), id, 'backoff', `backoff after ${n} failed attempt${n === 1 ? '' : 's'}`, until)
    }
    for (const s of rs.skipped ?? []) park(snap.byId.get(s.id), s.id, 'skipped', `skipped this run: ${s.reason}`, null)
  }
  for (const b of snap.beads) {
    // done beads are never parked (park() skips them); checked first so their labels are not read
    if (DONE.has(statusOf(b)) || !labelledBlocked(b)) continue
    // the reason from the run's BLOCKED note, as `tracker blocked` shows it
    const why = blockedNoteReason(b)
    park(b, b.id, 'blocked-label', why ? `blocked: ${why}` : "label 'blocked' (helix unblock to retry)", null)
  }
  for (const b of snap.beads) {
    if (statusOf(b) === 'blocked') park(b, b.id, 'blocked-status', "status 'blocked'", null)
  }
  for (const w of waiting) {
    if (w.waitingOn.length === 0) continue
    park(w.bead, w.bead.id, 'waiting-deps', `waiting on ${w.waitingOn.join(', ')}`, null)
  }

  let progress: RunProgress | null = null
  const in_flight: InFlight[] = []
  if (runIsLive && rs) {
    const cycles = Array.isArray(rs.cycles) ? rs.cycles : []
    const durations = cycles.map((c) => c.duration_ms).filter((d): d is number => typeof d === 'number' && Number.isFinite(d) && d >= 0)
    const cost = typeof rs.total_cost_usd === 'number' && Number.isFinite(rs.total_cost_usd) ? rs.total_cost_usd : null
    progress = {
      completed: rs.completed_cycles ?? 0,
      attempted: rs.attempted_cycles ?? 0,
      max_cycles: typeof rs.max_cycles === 'number' && rs.max_cycles > 0 ? rs.max_cycles : null,
      tokens: rs.total_tokens ?? 0,
      cost_usd: cost,
      elapsed_s: ageSeconds(rs.started_at ?? livePid?.started, now),
      mean_cycle_s: durations.length ? Math.round(durations.reduce((a, b) => a + b, 0) / durations.length / 1000) : null,
      last_cycle_s: durations.length ? Math.round(durations[durations.length - 1] / 1000) : null,
      ...(rs.sandboxed === true ? {sandboxed: true} : {}),
    }
    const workers = Array.isArray(rs.workers) ? rs.workers : []
    for (const w of workers) {
      if (!w || typeof w.bead !== 'string') continue
      in_flight.push({
        slot: typeof w.slot === 'number' ? w.slot : in_flight.length + 1,
        bead: w.bead,
        title: typeof w.title === 'string' ? w.title : titleOf(snap.byId.get(w.bead)),
        elapsed_s: ageSeconds(w.started_at, now),
        timeout_s: typeof w.timeout_s === 'number' ? w.timeout_s : null,
        last_output: typeof w.last_output === 'string' ? w.last_output : null,
        pid: typeof w.pid === 'number' && Number.isInteger(w.pid) && w.pid > 0 ? w.pid : null,
        attempt: typeof w.attempt === 'number' ? w.attempt : null,
        started_at: typeof w.started_at === 'string' ? w.started_at : null,
        worktree: typeof w.worktree === 'string' ? w.worktree : null,
        branch: typeof w.branch === 'string' ? w.branch : null,
      })
    }
    if (in_flight.length === 0 && rs.current_bead) {
      in_flight.push({
        slot: 1,
        bead: rs.current_bead,
        title: titleOf(snap.byId.get(rs.current_bead)),
        elapsed_s: ageSeconds(rs.current_bead_started_at, now),
        timeout_s: null,
        last_output: typeof rs.last_output === 'string' ? rs.last_output : null,
        pid: null,
      })
    }
  }

  // a `--remote` run claims on the remote, so this checkout's file still says `open` for the
  // beads its slots are working on: count them in progress (and claimed), not ready
  let tracker = counts
  const waitingIds = new Set(waiting.filter((w) => w.waitingOn.length > 0).map((w) => w.bead.id))
  for (const w of in_flight) {
    const b = snap.byId.get(w.bead)
    if (!b || statusOf(b) !== 'open' || claimed.some((c) => c.id === w.bead)) continue
    const wasReady = !labelledBlocked(b) && !waitingIds.has(b.id)
    tracker = {...tracker, open: Math.max(0, tracker.open - 1), in_progress: tracker.in_progress + 1, ready: Math.max(0, tracker.ready - (wasReady ? 1 : 0))}
    claimed.push({id: w.bead, title: w.title, owner: 'this run', pid: active?.pid ?? null, machine: null, claimed_at: w.started_at ?? null, claim_age_seconds: w.elapsed_s, live: true})
  }

  // waiting on dependencies is not "blocked" in the operator's sense: count them apart
  const waitingOnly = waiting.filter((w) => w.waitingOn.length > 0 && !labelledBlocked(w.bead) && statusOf(w.bead) === 'open').length
  const blockedHuman = Math.max(0, counts.blocked - waitingOnly)
  const left = Math.max(0, counts.total - counts.closed - (counts.cancelled ?? 0))
  const slots = Math.max(1, in_flight.length)
  const workable = Math.max(0, left - blockedHuman)
  const beads: BeadProgress = {
    closed: counts.closed,
    total: counts.total,
    left,
    waiting: waitingOnly,
    blocked: blockedHuman,
    eta_s: progress && progress.mean_cycle_s !== null ? Math.round((workable * progress.mean_cycle_s) / slots) : null,
  }

  let lastRun: StatusModel['lastRun'] = null
  let last_stop_reason: string | null = null
  // SPEC 16.4: Last Run describes the previous run; it is hidden while a run is active
  if (rs && !active) {
    const finished = !runIsLive && rs.started_at
    if (finished && rs.last_run && rs.last_run.started_at === rs.started_at) {
      // the run wrote its own summary when it stopped
      lastRun = {...rs.last_run, stop_reason: rs.last_run.stop_reason ?? null, stop_message: typeof rs.stop_message === 'string' ? rs.stop_message : null}
    } else if (finished) {
      // no summary: the run died (SIGKILL, crash) — show what run-state has
      lastRun = {
        started_at: rs.started_at,
        ended_at: rs.updated_at ?? null,
        attempted_cycles: rs.attempted_cycles ?? 0,
        completed_cycles: rs.completed_cycles ?? 0,
        total_tokens: rs.total_tokens ?? 0,
        stop_reason: rs.stop_reason ?? null,
        stop_message: typeof rs.stop_message === 'string' ? rs.stop_message : null,
      }
    } else if (rs.last_run) {
      lastRun = {...rs.last_run, stop_reason: rs.last_run.stop_reason ?? null}
    }
    last_stop_reason = lastRun?.stop_reason ?? null
  }

  return {
    beads,
    config: input.config ?? {},
    now: now.toISOString(),
    progress,
    in_flight,
    paused_until: runIsLive && rs && typeof rs.paused_until === 'string' && rs.paused_until ? rs.paused_until : null,
    pause_reason: runIsLive && rs && typeof rs.pause_reason === 'string' ? rs.pause_reason : null,
    last_output: runIsLive && rs ? (typeof rs.last_output === 'string' ? rs.last_output : (in_flight[0]?.last_output ?? null)) : null,
    tracker,
    active,
    stalePid: input.stalePid ?? null,
    runStateProblem: input.runStateProblem ?? null,
    staleWhy: input.staleWhy ?? (input.stalePid !== undefined && input.stalePid !== null ? `pid=${input.stalePid} was not running` : null),
    current_cycle: runIsLive && rs ? rs.current_cycle : null,
    phase: runIsLive && rs ? rs.phase ?? null : null,
    running_bead,
    focused_epic,
    claimed,
    parked,
    injected_supervisory: rs?.injected_supervisory ?? [],
    last_stop_reason,
    lastRun,
    run: rs,
  }
}

/** SPEC 7.1 `--json` shape. */
export function statusJson(m: StatusModel): Record<string, unknown> {
  return {
    current_cycle: m.current_cycle,
    running_bead: m.running_bead
      ? {
          id: m.running_bead.id,
          title: m.running_bead.title,
          claim_age_seconds: m.running_bead.claim_age_seconds,
          started_at: m.running_bead.started_at,
        }
      : null,
    parked_beads: m.parked.map((p) => ({id: p.id, reason: p.reason, next_eligible: p.next_eligible, age_seconds: p.age_seconds})),
    injected_supervisory: m.injected_supervisory,
    last_stop_reason: m.last_stop_reason,
    tracker: m.tracker,
    run: m.run,
    active_run: m.active ? {pid: m.active.pid, started: m.active.started, log: m.active.log} : null,
    progress: m.progress
      ? {
          completed: m.progress.completed,
          attempted: m.progress.attempted,
          max_cycles: m.progress.max_cycles,
          tokens: m.progress.tokens,
          cost_usd: m.progress.cost_usd,
          elapsed_s: m.progress.elapsed_s,
          mean_cycle_s: m.progress.mean_cycle_s,
        }
      : null,
    beads: m.beads,
    last_output: m.last_output,
    paused_until: m.paused_until,
    workers: m.in_flight,
  }
}
