/**
 * The forge port of `--land pr` (SPEC 20.5): what helix asks of GitHub (through
 * `gh`) or of another forge (through a `--pr-command` adapter). Every answer is
 * untrusted text from the network: parsed defensively here, sanitized before any
 * of it reaches a terminal line.
 */
export type PrState = 'open' | 'merged' | 'closed'
/** the required checks as one word; `none` when the forge reports no check at all */
export type PrChecks = 'pending' | 'passing' | 'failing' | 'none'
export type PrMergeable = 'mergeable' | 'conflicting' | 'unknown'
export type MergeMethod = 'squash' | 'merge' | 'rebase'

export interface PrView {
  url: string
  state: PrState
  mergedAt: string | null
  mergeCommit: string | null
  mergeable: PrMergeable
  checks: PrChecks
  createdAt: string | null
  /** the last comment's text (a closed pull request's reason, quoted in the bead's note) */
  lastComment: string | null
}

export interface PrCreateInput {
  base: string
  head: string
  title: string
  body: string
}

export type ForgeAuth = {ok: true} | {ok: false; message: string}

export interface Forge {
  /** the command named in lines (`gh`, or the adapter's first word) */
  readonly name: string
  /** at start: installed and logged in; `message` is the one line to print (exit 4) */
  auth(): Promise<ForgeAuth>
  /** opens a pull request; an open one for the same head is answered with its URL. Throws with a one-line reason. */
  create(input: PrCreateInput): Promise<{url: string}>
  /** a pull request by URL or head branch; null when the forge did not answer or knows none */
  view(ref: string): Promise<PrView | null>
  /** ask the forge to merge once its checks pass. Throws with a one-line reason. */
  mergeAuto(url: string, method: MergeMethod): Promise<void>
  comment(url: string, body: string): Promise<void>
  /** the failing checks' output as the forge gives it ('' when none) */
  checksLog(url: string): Promise<string>
}

/**
 * A forge that could not be reached, or answered as a server in trouble (gh: Go's network
 * errors, HTTP 5xx, a forge command helix stopped after its time, src/forge/spawn.ts) or answered
 * nothing usable where an answer must be: worth asking again later, and nobody's fault. A refusal is not this.
 */
const FORGE_AWAY = /error connecting to|check your internet connection|could not resolve host|no such host|server misbehaving|dial tcp|connection (refused|reset|timed out)|i\/o timeout|TLS handshake timeout|context deadline exceeded|network is unreachable|HTTP 5\d\d\b|\b50[234] (bad gateway|service unavailable|gateway time-?out)|unexpected EOF|did not answer (within \d|with a pull request)/i
export const forgeAway = (message: string): boolean => FORGE_AWAY.test(message)
/** a forge's words for refusing helix itself rather than one pull request (gh: GraphQL and HTTP errors) */
const FORGE_DENIED = /resource not accessible|permission|not permitted|forbidden|HTTP 40[13]\b|bad credentials|must (be a collaborator|have (push|write|admin) access)|requires authentication|not logged in|auth login/i
export const forgeDenies = (message: string): boolean => FORGE_DENIED.test(message)

const str = (v: unknown, max = 2000): string | null => (typeof v === 'string' && v.length > 0 ? v.slice(0, max) : null)

/** gh's `statusCheckRollup` (CheckRun: status + conclusion; StatusContext: state) as one word */
export function rollupChecks(v: unknown): PrChecks {
  if (!Array.isArray(v) || v.length === 0) return 'none'
  let pending = false
  for (const c of v) {
    if (!c || typeof c !== 'object') continue
    const o = c as Record<string, unknown>
    const conclusion = String(o.conclusion ?? '').toUpperCase()
    const state = String(o.state ?? '').toUpperCase()
    const status = String(o.status ?? '').toUpperCase()
    if (/^(FAILURE|CANCELLED|TIMED_OUT|ACTION_REQUIRED|STARTUP_FAILURE|ERROR)$/.test(conclusion) || /^(FAILURE|ERROR)$/.test(state)) return 'failing'
    if ((status && status !== 'COMPLETED') || /^(PENDING|EXPECTED)$/.test(state)) pending = true
  }
  return pending ? 'pending' : 'passing'
}

/**
 * `gh pr view --json state,mergedAt,mergeCommit,url,mergeable,statusCheckRollup,createdAt,comments`
 * (gh's manual, `gh pr view --help` JSON FIELDS): state OPEN|CLOSED|MERGED, mergeable
 * MERGEABLE|CONFLICTING|UNKNOWN, mergeCommit {oid}, comments [{body}]. A
 * `--pr-command` adapter may answer the same shape, or ours (lower-case words,
 * `checks`, `lastComment`). Null when the answer is not an object with a URL and a state.
 */
export function parsePrView(v: unknown): PrView | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null
  const o = v as Record<string, unknown>
  const url = str(o.url, 500)
  const rawState = String(o.state ?? '').toLowerCase()
  if (!url || !/^(open|merged|closed)$/.test(rawState)) return null
  const mc = o.mergeCommit
  const mergeCommit = typeof mc === 'string' ? str(mc, 80) : mc && typeof mc === 'object' ? str((mc as Record<string, unknown>).oid, 80) : null
  const rawMergeable = String(o.mergeable ?? '').toLowerCase()
  const mergeable: PrMergeable = rawMergeable === 'mergeable' || rawMergeable === 'conflicting' ? rawMergeable : 'unknown'
  const rawChecks = String(o.checks ?? '').toLowerCase()
  const checks: PrChecks = /^(pending|passing|failing|none)$/.test(rawChecks) ? (rawChecks as PrChecks) : rollupChecks(o.statusCheckRollup)
  let lastComment = str(o.lastComment)
  if (!lastComment && Array.isArray(o.comments) && o.comments.length > 0) {
    const c = o.comments.at(-1) as unknown
    lastComment = c && typeof c === 'object' ? str((c as Record<string, unknown>).body) : null
  }
  return {url, state: rawState as PrState, mergedAt: str(o.mergedAt, 60), mergeCommit, mergeable, checks, createdAt: str(o.createdAt, 60), lastComment}
}

/** the first http(s) URL in a forge's answer */
export function findUrl(text: string): string | null {
  const m = /https?:\/\/[^\s"'<>]+/.exec(text)
  return m ? m[0].slice(0, 500) : null
}
