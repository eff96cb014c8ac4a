/**
 * What agents say about themselves (SPEC 14.1): the fixed phrases that mean
 * "unavailable" or "out of quota", and the reset times they carry
 * (`try again at 3:10 PM`, `try again in 4 days 20 hours 9 minutes`, Unix
 * seconds, ISO-8601). Pure functions; the decoders in output.ts use them.
 */
import type {AgentHealth} from './types.js'

/** claude's refusal to bypass permissions as root (the whole first line it prints). */
export const ROOT_REFUSAL = '--dangerously-skip-permissions cannot be used with root/sudo privileges'
/** SPEC 14.1: the fix added to the root refusal. */
export const ROOT_HINT = 'run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust'

/** codex (and its text mode): out of quota. */
export const CODEX_QUOTA = /you(?:'|’)ve hit your usage limit|usage_limit_reached/i
/** codex: credentials missing or refused. */
export const CODEX_UNAUTHORIZED = /\b401\b|unauthorized|not logged in/i

/** One line, at most `max` characters (error texts go into one-line messages). */
export function oneLineOf(s: string, max = 500): string {
  const flat = s.replace(/\s*\r?\n\s*/g, ' ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}

const UNIT_SECONDS: Array<[RegExp, number]> = [
  [/^(?:d|days?)$/i, 86_400],
  [/^(?:h|hrs?|hours?)$/i, 3_600],
  [/^(?:m|mins?|minutes?)$/i, 60],
  [/^(?:s|secs?|seconds?)$/i, 1],
]

/**
 * `2s`, `90 seconds`, `1h30m`, `4 days 20 hours 9 minutes`, `1 hour and 5 minutes`
 * → seconds. Reads from the start of `text` and stops at the first word that is
 * not part of a duration; undefined when nothing at the start is a duration.
 */
export function parseDuration(text: string): number | undefined {
  const re = /^\s*(?:,|and\b)?\s*(\d+(?:\.\d+)?)\s*([a-z]+)/i
  let rest = text
  let total = 0
  let any = false
  for (;;) {
    const m = re.exec(rest)
    if (!m) break
    const unit = UNIT_SECONDS.find(([u]) => u.test(m[2]))
    if (!unit) break
    total += Number(m[1]) * unit[1]
    any = true
    rest = rest.slice(m[0].length)
  }
  return any ? total : undefined
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec']

function hour12(h: number, ampm: string | undefined): number {
  if (!ampm) return h
  const pm = /^p/i.test(ampm)
  return (h % 12) + (pm ? 12 : 0)
}

/**
 * A reset time as agents print it → Date (local time, like the agent that
 * printed it on this host):
 * - ISO-8601 (`2026-11-23T03:10:00Z`);
 * - `Dec 29th, 2025 10:15 PM` (codex, a reset on another day);
 * - `3:10 PM`, `03:10`, `15:10:30` (codex, today; a time already past means tomorrow).
 * undefined when `text` does not start with one of these.
 */
export function parseClockTime(text: string, now: Date): Date | undefined {
  const t = text.trim()
  const iso = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/.exec(t)
  if (iso) {
    const ms = Date.parse(iso[0].replace(' ', 'T'))
    return Number.isFinite(ms) ? new Date(ms) : undefined
  }
  const dated = /^([a-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4}),?\s+(?:at\s+)?(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?/i.exec(t)
  if (dated) {
    const month = MONTHS.indexOf(dated[1].toLowerCase())
    if (month < 0) return undefined
    const d = new Date(Number(dated[3]), month, Number(dated[2]), hour12(Number(dated[4]), dated[7]), Number(dated[5]), Number(dated[6] ?? 0))
    return Number.isFinite(d.getTime()) ? d : undefined
  }
  const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([ap]\.?m\.?)?(?![\w:])/i.exec(t)
  if (clock) {
    const h = hour12(Number(clock[1]), clock[4])
    const min = Number(clock[2])
    if (h > 23 || min > 59) return undefined
    const d = new Date(now.getFullYear(), now.getMonth(), now.getDate(), h, min, Number(clock[3] ?? 0))
    if (d.getTime() <= now.getTime()) d.setDate(d.getDate() + 1)
    return d
  }
  return undefined
}

/**
 * The reset time in a codex usage-limit message: `try again at <time>`, `try
 * again in <duration>`, or the API body's `resets_in_seconds` / `resets_at`.
 * ISO string, or null when the message names none.
 */
export function codexResetAt(message: string, now: Date): string | null {
  const at = /try again at\s+(.+)/i.exec(message)
  if (at) {
    const d = parseClockTime(at[1], now)
    if (d) return d.toISOString()
  }
  const inn = /try again in\s+(.+)/i.exec(message)
  if (inn) {
    const s = parseDuration(inn[1])
    if (s !== undefined) return new Date(now.getTime() + s * 1000).toISOString()
  }
  const secs = /"?resets_in_seconds"?\s*[:=]\s*(\d+)/.exec(message)
  if (secs) return new Date(now.getTime() + Number(secs[1]) * 1000).toISOString()
  const unix = /"?resets_at"?\s*[:=]\s*(\d{9,13})\b/.exec(message)
  if (unix) return unixToIso(Number(unix[1]))
  return null
}

/** Unix seconds (or milliseconds, when it is that large) → ISO; null for nonsense. */
export function unixToIso(n: unknown): string | null {
  const v = typeof n === 'string' ? Number(n) : n
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return null
  const ms = v > 1e12 ? v : v * 1000
  const d = new Date(ms)
  return Number.isFinite(d.getTime()) ? d.toISOString() : null
}

/**
 * A command agent's `HELIX_AGENT_STATUS: QUOTA <value>`: ISO-8601 time, a number
 * of seconds from now, a duration (`90s`, `1h30m`) or a clock time. null when
 * empty or unreadable (helix then probes, SPEC 14.3).
 */
export function quotaValueResetAt(value: string, now: Date): string | null {
  const v = value.trim()
  if (v === '') return null
  if (/^\d+(?:\.\d+)?$/.test(v)) return new Date(now.getTime() + Number(v) * 1000).toISOString()
  const clock = parseClockTime(v, now)
  if (clock) return clock.toISOString()
  const s = parseDuration(v)
  if (s !== undefined) return new Date(now.getTime() + s * 1000).toISOString()
  return null
}

/** Unavailable beats quota beats ok: a logged-out agent stays logged out after any reset. */
export function worseHealth(a: AgentHealth, b: AgentHealth): AgentHealth {
  const rank = (h: AgentHealth) => (h.kind === 'unavailable' ? 2 : h.kind === 'quota' ? 1 : 0)
  return rank(b) > rank(a) ? b : a
}

/** `1h42m`, `5m`, `40s` */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 60) return `${s}s`
  const m = Math.round(s / 60)
  if (m < 60) return `${m}m`
  const h = Math.floor(m / 60)
  const d = Math.floor(h / 24)
  if (d > 0) return `${d}d${h % 24 ? `${h % 24}h` : ''}`
  return `${h}h${m % 60 ? `${m % 60}m` : ''}`
}

const pad = (n: number) => String(n).padStart(2, '0')

/** A reset time for people: `03:10 (in 1h42m)` today/tomorrow, `2026-11-29 22:15 (in 6d6h)` further out (local time). */
export function describeReset(resetAt: string, now: Date): string {
  const d = new Date(resetAt)
  if (!Number.isFinite(d.getTime())) return resetAt
  const hhmm = `${pad(d.getHours())}:${pad(d.getMinutes())}`
  const ms = d.getTime() - now.getTime()
  const when = ms < 24 * 3600_000 ? hhmm : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${hhmm}`
  return `${when} (in ${shortDuration(ms)})`
}

/**
 * The one line a one-shot command ends with when the agent is not usable
 * (SPEC 14.2 wording for unavailable; 14.3: one-shot commands do not pause).
 * Untrusted parts must be sanitized by the caller.
 */
export function healthStopLine(agentName: string, h: Exclude<AgentHealth, {kind: 'ok'}>, now: Date): string {
  if (h.kind === 'unavailable') return `helix: agent ${agentName} unavailable: ${h.reason}`
  const when = h.resetAt ? `resets at ${describeReset(h.resetAt, now)}` : 'no reset time given, try again later'
  return `helix: ${agentName} quota exhausted; ${when}${h.message ? ` — ${h.message}` : ''}`
}
