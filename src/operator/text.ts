/**
 * Text form of `helix status` (SPEC 7.1): five sections that fit one screen
 * (default 80×24, a tmux pane). Long titles are cut with `…`; long lists end
 * with `… and N more`. Untrusted text (titles, ids, reasons) is only ever
 * concatenated, never used as a format string; control characters are replaced
 * so a title cannot move the cursor.
 */
import type {InFlight, StatusModel} from './model.js'
import {sanitize} from '../util/sanitize.js'
import {groupDigits} from '../util/numbers.js'

export interface TextOptions {
  width?: number
  height?: number
}

export {sanitize}

/**
 * Terminal columns of one code point: 2 for East Asian wide/fullwidth characters
 * and the common emoji blocks, 0 for combining marks, else 1. A tmux pane cuts
 * by columns, so a title of CJK characters counted as 1 each would wrap.
 */
function columnsOf(cp: number): number {
  if ((cp >= 0x300 && cp <= 0x36f) || cp === 0x200d || (cp >= 0xfe00 && cp <= 0xfe0f)) return 0
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0xa4cf && cp !== 0x303f) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  ) {
    return 2
  }
  return 1
}

/** Terminal columns `text` takes. */
export function displayWidth(text: string): number {
  let w = 0
  for (const ch of text) w += columnsOf(ch.codePointAt(0)!)
  return w
}

/** Keep the start, cut to `width` terminal columns with a trailing `…`. */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text
  let out = ''
  let used = 0
  const room = width <= 1 ? width : width - 1
  for (const ch of text) {
    const w = columnsOf(ch.codePointAt(0)!)
    if (used + w > room) break
    out += ch
    used += w
  }
  return width <= 1 ? out : out + '…'
}

/** Keep the end (a path's file name matters most): `…/end/of/the/path.log`. */
export function truncateStart(text: string, width: number): string {
  if (displayWidth(text) <= width) return text
  const chars = Array.from(text)
  let out = ''
  let used = 0
  for (let i = chars.length - 1; i >= 0; i--) {
    const w = columnsOf(chars[i].codePointAt(0)!)
    if (used + w > width - 1) break
    out = chars[i] + out
    used += w
  }
  return '…' + out
}

export function formatAge(seconds: number | null): string {
  if (seconds === null) return '?'
  if (seconds < 60) return `${seconds}s`
  const m = Math.floor(seconds / 60)
  if (m < 60) return `${m}m${seconds % 60 ? ` ${seconds % 60}s` : ''}`
  const h = Math.floor(m / 60)
  if (h < 48) return `${h}h${m % 60 ? ` ${m % 60}m` : ''}`
  const d = Math.floor(h / 24)
  return `${d}d${h % 24 ? ` ${h % 24}h` : ''}`
}

/** `2026-11-22 04:10:03Z` from an ISO string; the raw text when unparsable. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '?'
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return sanitize(iso)
  return new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z')
}

export function secondsBetween(fromIso: string | null | undefined, now: string): number | null {
  if (!fromIso) return null
  const a = Date.parse(fromIso)
  const b = Date.parse(now)
  if (Number.isNaN(a) || Number.isNaN(b)) return null
  return Math.floor((b - a) / 1000)
}

function when(iso: string | null | undefined, now: string): string {
  const s = secondsBetween(iso, now)
  if (s === null) return formatTime(iso)
  return s >= 0 ? `${formatTime(iso)} (${formatAge(s)} ago)` : `${formatTime(iso)} (in ${formatAge(-s)})`
}

/** `HH:MM` local time (the operator's clock) of an ISO time; the raw text when unparsable. */
export function clockTime(iso: string): string {
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return sanitize(iso)
  const d = new Date(t)
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/**
 * The day of a time that is not today, on the operator's clock: '' today, ' tomorrow',
 * else ' on Mon 30 Nov'. A weekly quota's reset at 03:00 three days out must not read as
 * "resumes at 03:00" (which would be an hour ago at 04:00).
 */
export function dayOf(iso: string, nowIso: string): string {
  const t = Date.parse(iso)
  const n = Date.parse(nowIso)
  if (Number.isNaN(t) || Number.isNaN(n)) return ''
  const day = (ms: number) => {
    const d = new Date(ms)
    return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime()
  }
  const days = Math.round((day(t) - day(n)) / 86_400_000)
  if (days === 0) return ''
  if (days === 1) return ' tomorrow'
  const d = new Date(t)
  return ` on ${WEEKDAYS[d.getDay()]} ${d.getDate()} ${MONTHS[d.getMonth()]}`
}

function ofTimeout(w: InFlight): string {
  return `${formatAge(w.elapsed_s)}${w.timeout_s ? ` of ${formatAge(w.timeout_s)}` : ''}`
}

/**
 * In-flight beads. One worker: the bead is on the Cycle line already, so one row
 * with its elapsed time and the agent's last output line. Several: one row per slot
 * (bead, elapsed of timeout, title), and under it the last output line while there
 * are at most two slots (four slots would not fit 24 rows otherwise). Never more
 * than `cap` rows: slots that do not fit end in `… and N more slots`.
 */
function inFlightRows(list: InFlight[], multi: boolean, width: number, cap: number): string[] {
  const out: string[] = []
  if (!multi) {
    const w = list[0]
    if (w && (w.elapsed_s !== null || w.last_output)) out.push(`  Agent:   ${ofTimeout(w)}${w.last_output ? `  » ${sanitize(w.last_output)}` : ''}`)
    return out
  }
  const roomy = list.length <= 2 && list.length * 2 <= cap
  const shown = list.length <= cap ? list : list.slice(0, Math.max(0, cap - 1))
  for (const w of shown) {
    const head = `  w${w.slot} ${sanitize(w.bead)}  ${ofTimeout(w)}`
    if (roomy) {
      out.push(`${head}  ${sanitize(w.title)}`)
      if (w.last_output) out.push(`       » ${sanitize(w.last_output)}`)
    } else {
      const rest = w.last_output ? `» ${sanitize(w.last_output)}` : sanitize(w.title)
      out.push(truncate(`${head}  ${rest}`, width))
    }
  }
  if (shown.length < list.length) out.push(`  … and ${list.length - shown.length} more slots`)
  return out
}

/** A list section: header, then items, capped to `budget` rows including the `… and N more` row. */
function listSection(header: string, items: string[], budget: number): string[] {
  if (items.length === 0) return [`${header} none`]
  const rows = [header]
  const room = Math.max(1, budget - 1)
  if (items.length <= room) return rows.concat(items)
  const shown = Math.max(0, room - 1)
  return rows.concat(items.slice(0, shown), [`  … and ${items.length - shown} more`])
}

function runStartedAt(m: StatusModel): string {
  const rs = m.run?.started_at
  return typeof rs === 'string' && rs && !Number.isNaN(Date.parse(rs)) ? rs : m.active!.started
}

/** `in 9s` for a future time, `now` for a past one (backoff ends, pause ends). */
export function relative(iso: string, now: string): string {
  const s = secondsBetween(now, iso)
  if (s === null) return `until ${formatTime(iso)}`
  return s > 0 ? `in ${formatAge(s)}` : 'now'
}

/** `3/8 beads closed, 5 left, ETA 42m` (ETA: the workable beads at the mean cycle time over the workers). */
export function beadProgress(m: StatusModel): string {
  const b = m.beads
  const eta = b.left === 0 ? '' : b.eta_s !== null ? `, ETA ${formatAge(b.eta_s)}` : ', ETA after the first cycle'
  return `${b.closed}/${b.total} beads closed, ${b.left} left${eta}`
}

/** `3 completed of 4 attempted (max 10)`: cycles, never read as beads. */
export function cyclesLine(p: NonNullable<StatusModel['progress']>): string {
  return `${p.completed} completed of ${p.attempted} attempted${p.max_cycles !== null ? ` (max ${p.max_cycles})` : ''}${p.sandboxed ? ', sandboxed' : ''}`
}

/** What the next run uses from .helix/config.json: `agent ./agent.sh, 3 workers`. */
export function configSummary(config: StatusModel['config']): string {
  const parts: string[] = []
  if (config.agent !== undefined) parts.push(`agent ${sanitize(config.agent)}`)
  if (config['review-agent'] !== undefined) parts.push(`review ${sanitize(config['review-agent'])}`)
  if (config.workers !== undefined) parts.push(`${sanitize(config.workers)} workers`)
  return parts.join(', ')
}

export function renderStatusText(m: StatusModel, opts: TextOptions = {}): string {
  const width = Math.max(40, opts.width ?? 80)
  const height = Math.max(20, opts.height ?? 24)
  const fit = (line: string) => truncate(line, width)
  const t = m.tracker

  const tracker = [
    'Tracker:',
    `  Total:       ${t.total}`,
    `  Open:        ${t.open}`,
    `  In progress: ${t.in_progress}`,
    `  Closed:      ${t.closed}`,
    `  Ready:       ${t.ready}`,
    // blocked (a human must look) and waiting on dependencies are different things
    `  Blocked:     ${m.beads.blocked} (needs a human), ${m.beads.waiting} waiting on dependencies`,
  ]

  const run: string[] = []
  if (m.active) {
    run.push('Active Run:')
    run.push(`  PID:     ${m.active.pid}`)
    // the run's own start (run-state), so Started's "ago" is the run's elapsed time
    run.push(`  Started: ${when(runStartedAt(m), m.now)}`)
    run.push(`  Log:     ${m.active.log ? truncateStart(sanitize(m.active.log), width - 11) : '(not yet written)'}`)
    // with workers run-state has no current bead: one busy slot is still the bead being worked on
    const one = m.in_flight.length === 1 ? m.in_flight[0] : undefined
    const bead = m.running_bead
      ? `${sanitize(m.running_bead.id)} (claimed ${formatAge(m.running_bead.claim_age_seconds)} ago) ${sanitize(m.running_bead.title)}`
      : one
        ? `${sanitize(one.bead)} (w${one.slot}) ${sanitize(one.title)}`
        : 'none'
    const phase = m.phase && m.phase !== 'implementing' && m.phase !== 'running' ? `  (${sanitize(m.phase)})` : ''
    const multi = m.in_flight.length > 1
    run.push(`  Cycle:   ${m.current_cycle ?? '?'}${phase}  ${multi ? `Workers: ${m.in_flight.length} busy` : `Bead: ${bead}`}`)
    if (m.progress) {
      const p = m.progress
      const cost = p.cost_usd !== null && p.cost_usd > 0 ? `, $${p.cost_usd.toFixed(2)}` : ''
      run.push(`  Progress: ${beadProgress(m)}; ${groupDigits(p.tokens)} tokens${cost}`)
      const mean = p.mean_cycle_s !== null ? `, mean ${formatAge(p.mean_cycle_s)}, last ${formatAge(p.last_cycle_s)}` : ''
      run.push(`  Cycles:  ${cyclesLine(p)}${mean}`)
    }
    if (m.paused_until) {
      // the kind only ('quota: <agent message>' → 'quota'): the message would overflow 80 columns
      run.push(`  Paused: ${sanitize((m.pause_reason || 'quota').split(':')[0].trim() || 'quota')}, resumes at ${clockTime(m.paused_until)}${dayOf(m.paused_until, m.now)}`)
    }
    const epic = m.focused_epic ? [`  Epic:    ${sanitize(m.focused_epic.id)} ${sanitize(m.focused_epic.title)}`] : []
    // rows left for the slots: the tracker, the rest of this section, Claimed and Parked (2 each)
    const cap = Math.max(1, height - tracker.length - run.length - epic.length - 4)
    run.push(...inFlightRows(m.in_flight, multi, width, cap), ...epic)
  } else if (m.staleWhy !== null) {
    run.push(`Active Run: none (stale PID file removed: ${m.staleWhy})`)
  } else {
    const cfg = configSummary(m.config)
    run.push(`Active Run: none${cfg ? ` (next: ${cfg})` : ''}`)
  }

  const last: string[] = []
  if (m.lastRun) {
    const r = m.lastRun
    last.push('Last Run:')
    last.push(`  Cycles:  ${r.completed_cycles} completed of ${r.attempted_cycles} attempted, ${groupDigits(r.total_tokens)} tokens`)
    last.push(`  Stopped: ${stoppedWords(r.stop_reason, r.stop_message)}, ${when(r.ended_at, m.now)}`)
  } else if (m.active) {
    // SPEC 16.4: Last Run (the previous run) is hidden while a run is active
  } else if (m.runStateProblem) {
    // not "none": a run may well have happened, its record is what broke
    last.push(`Last Run: unknown: .ddx/run-state.json is ${sanitize(m.runStateProblem)}`)
  } else {
    last.push('Last Run: none')
  }

  // several workers: their beads have their own rows above, Claimed lists the other claims
  const shownAbove = new Set(m.in_flight.length > 1 ? m.in_flight.map((w) => w.bead) : [])
  const claimed = m.claimed.filter((c) => !shownAbove.has(c.id))
  // the claim meta; a stale claim reads `claimed by <owner> (stale)`
  const claimMeta = claimed.map((c) => {
    const rest = [c.pid !== null ? `pid ${c.pid}` : null, c.claim_age_seconds === null ? 'age unknown' : `${formatAge(c.claim_age_seconds)} ago`]
    if (!c.live) return ` — ${[`claimed by ${c.owner ? sanitize(c.owner) : '?'} (stale)`, ...rest].filter(Boolean).join(', ')}`
    return ` (${[c.owner ? `by ${sanitize(c.owner)}` : null, ...rest].filter(Boolean).join(', ')})`
  })
  // put the meta first so truncation of a long title does not hide it
  const claimedRows = claimed.map((c, i) => {
    const who = claimMeta[i]
    const full = `  ${sanitize(c.id)}  ${sanitize(c.title)}${who}`
    if (displayWidth(full) <= width) return full
    return truncate(`  ${sanitize(c.id)}  ${sanitize(c.title)}`, Math.max(10, width - displayWidth(who))) + who
  })

  const parkedRows = m.parked.map((p) => {
    const until = p.next_eligible ? ` ${relative(p.next_eligible, m.now)}` : ''
    const title = p.title ? ` — ${sanitize(p.title)}` : ''
    return `  ${sanitize(p.id)}  ${sanitize(p.reason)}${until}${title}`
  })

  // row budget: fixed sections first, then share what remains between the lists
  const fixed = tracker.length + run.length + last.length
  let remaining = height - fixed
  const claimedNeed = claimed.length ? claimed.length + 1 : 1
  const parkedNeed = m.parked.length ? m.parked.length + 1 : 1
  let claimedBudget: number
  let parkedBudget: number
  if (claimedNeed + parkedNeed <= remaining) {
    claimedBudget = claimedNeed
    parkedBudget = parkedNeed
  } else {
    remaining = Math.max(4, remaining)
    claimedBudget = Math.min(claimedNeed, Math.max(2, Math.ceil(remaining / 2)))
    parkedBudget = Math.max(2, remaining - claimedBudget)
    if (parkedNeed < parkedBudget) {
      claimedBudget = Math.min(claimedNeed, remaining - parkedNeed)
      parkedBudget = parkedNeed
    }
  }

  const lines = [
    ...tracker,
    ...run,
    // `In progress: 2` and `Claimed: none` must not disagree: the claims shown as busy slots above are counted here
    ...listSection(shownAbove.size > 0 ? `Claimed (besides the ${shownAbove.size} running above):` : 'Claimed:', claimedRows, claimedBudget),
    ...listSection('Parked:', parkedRows, parkedBudget),
    ...last,
  ]
  return lines.map(fit).join('\n') + '\n'
}

/** `interrupted (SIGTERM)`, not `interrupted (interrupted (SIGTERM))`: a message that starts with the reason is said once */
export function stoppedWords(reason: string | null | undefined, message: string | null | undefined): string {
  const why = reason ? sanitize(reason) : 'no stop recorded (killed?)'
  if (!message) return why
  const msg = sanitize(message)
  return reason && msg.startsWith(why) ? msg : `${why} (${msg})`
}
