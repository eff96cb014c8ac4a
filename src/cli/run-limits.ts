/**
 * `helix run`'s limits from flags and environment (SPEC 14.3, 14.4, 14.6, 15):
 * validated before anything is written (no mutex, no log, no run-state), one
 * line naming the flag on bad input.
 */
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

export interface LimitFlags {
  workers?: string
  land?: string
  'stall-timeout'?: string
  'land-check'?: string
  'land-check-timeout'?: string
  'resolve-attempts'?: string
  'max-tokens'?: string
  'max-cost'?: string
  'max-bead-tokens'?: string
  'max-bead-cost'?: string
  'max-quota-wait'?: string
  notify?: string
}

export interface RunLimits {
  workers: number
  /** 'pr' (SPEC 20.5): pull requests through the forge, with --remote only; the loop itself lands as 'ff' */
  land: 'ff' | 'none' | 'pr'
  stallTimeoutSec: number
  /** SPEC 20.3: the land check command (undefined: none) */
  landCheck?: string
  landCheckTimeoutSec: number
  /** SPEC 20.4: failed resolve rounds per landing (0 disables) */
  resolveAttempts: number
  maxTokens?: number
  maxCost?: number
  maxBeadTokens?: number
  maxBeadCost?: number
  maxQuotaWaitSec: number
  /** the notifier argv (split on spaces, no shell), undefined when none */
  notify?: string[]
}

function pick(flags: LimitFlags, env: NodeJS.ProcessEnv, flag: keyof LimitFlags, envName: string): {raw: string; name: string} | null {
  const v = flags[flag]
  if (v !== undefined) return {raw: v, name: `--${flag}`}
  const e = env[envName]
  if (e !== undefined && e.trim() !== '') return {raw: e, name: envName}
  return null
}

function bad(name: string, raw: string, expected: string): HelixError {
  return new HelixError(`invalid ${name} '${sanitize(raw).slice(0, 40)}': expected ${expected}`, EXIT.ERROR)
}

function wholeNumber(v: {raw: string; name: string}, min: number, max: number, expected: string): number {
  const t = v.raw.trim()
  if (!/^\d+$/.test(t)) throw bad(v.name, v.raw, expected)
  const n = Number(t)
  if (!Number.isSafeInteger(n) || n < min || n > max) throw bad(v.name, v.raw, expected)
  return n
}

function usd(v: {raw: string; name: string} | null): number | undefined {
  if (!v) return undefined
  const t = v.raw.trim()
  if (!/^\d+(\.\d+)?$/.test(t) || Number(t) <= 0) throw bad(v.name, v.raw, 'an amount in USD > 0, like 5 or 2.50')
  return Number(t)
}

/** the words SPEC 9's on/off variables take (HELIX_AUTO_ALIGN, HELIX_SANDBOX) */
const SWITCH_WORDS = ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off']

/**
 * SPEC 9's variables that are read deep in the tracker and the loop, where a bad value
 * falls back to the default (or, for a switch, to on) without a word: checked here, so a
 * typo (`HELIX_BACKOFF_SLEEP=5s`, `HELIX_SANDBOX=maybe`) is one line before anything starts.
 */
function checkEnvironment(env: NodeJS.ProcessEnv): void {
  for (const name of ['HELIX_LOCK_TIMEOUT', 'HELIX_ORPHAN_THRESHOLD', 'HELIX_BACKOFF_SLEEP']) {
    const raw = env[name]
    if (raw !== undefined && raw.trim() !== '' && !/^\d+(\.\d+)?$/.test(raw.trim())) throw bad(name, raw, 'seconds, a number ≥ 0')
  }
  for (const name of ['HELIX_AUTO_ALIGN', 'HELIX_SANDBOX']) {
    const raw = env[name]
    if (raw !== undefined && raw.trim() !== '' && !SWITCH_WORDS.includes(raw.trim().toLowerCase())) throw bad(name, raw, '1 or 0 (or true/false, yes/no, on/off)')
  }
}

/** Throws HelixError(1) naming the flag (or variable) with the bad value. */
export function parseRunLimits(flags: LimitFlags, env: NodeJS.ProcessEnv): RunLimits {
  checkEnvironment(env)
  const w = pick(flags, env, 'workers', 'HELIX_WORKERS')
  const workers = w ? wholeNumber(w, 1, 32, 'a whole number from 1 to 32') : 1
  const l = pick(flags, env, 'land', 'HELIX_LAND')
  if (l && l.raw !== 'ff' && l.raw !== 'none' && l.raw !== 'pr') throw bad(l.name, l.raw, "'ff', 'none' or 'pr'")
  const st = pick(flags, env, 'stall-timeout', 'HELIX_STALL_TIMEOUT')
  const stallTimeoutSec = st ? wholeNumber(st, 0, 7 * 86400, 'seconds, a whole number ≥ 0 (0 disables)') : 900
  const lc = pick(flags, env, 'land-check', 'HELIX_LAND_CHECK')
  if (lc && lc.raw.trim() === '') throw bad(lc.name, lc.raw, 'a command, like "npm test"')
  const lct = pick(flags, env, 'land-check-timeout', 'HELIX_LAND_CHECK_TIMEOUT')
  const landCheckTimeoutSec = lct ? wholeNumber(lct, 1, 7 * 86400, 'seconds, a whole number ≥ 1') : 1800
  const ra = pick(flags, env, 'resolve-attempts', 'HELIX_RESOLVE_ATTEMPTS')
  const resolveAttempts = ra ? wholeNumber(ra, 0, 20, 'a whole number from 0 to 20 (0 disables)') : 2
  const mt = pick(flags, env, 'max-tokens', 'HELIX_MAX_TOKENS')
  const maxTokens = mt ? wholeNumber(mt, 1, Number.MAX_SAFE_INTEGER, 'a whole number of tokens > 0') : undefined
  const maxCost = usd(pick(flags, env, 'max-cost', 'HELIX_MAX_COST'))
  const bt = pick(flags, env, 'max-bead-tokens', 'HELIX_MAX_BEAD_TOKENS')
  const maxBeadTokens = bt ? wholeNumber(bt, 1, Number.MAX_SAFE_INTEGER, 'a whole number of tokens > 0') : undefined
  const maxBeadCost = usd(pick(flags, env, 'max-bead-cost', 'HELIX_MAX_BEAD_COST'))
  const mq = pick(flags, env, 'max-quota-wait', 'HELIX_MAX_QUOTA_WAIT')
  const maxQuotaWaitSec = mq ? wholeNumber(mq, 0, 30 * 86400, 'seconds, a whole number ≥ 0') : 21600
  const n = pick(flags, env, 'notify', 'HELIX_NOTIFY')
  let notify: string[] | undefined
  if (n) {
    notify = n.raw.split(' ').filter((p) => p !== '')
    if (notify.length === 0) throw bad(n.name, n.raw, 'a command')
  }
  return {workers, land: l?.raw === 'none' || l?.raw === 'pr' ? l.raw : 'ff', stallTimeoutSec, ...(lc ? {landCheck: lc.raw.trim()} : {}), landCheckTimeoutSec, resolveAttempts, ...(maxTokens ? {maxTokens} : {}), ...(maxCost ? {maxCost} : {}), ...(maxBeadTokens ? {maxBeadTokens} : {}), ...(maxBeadCost ? {maxBeadCost} : {}), maxQuotaWaitSec, ...(notify ? {notify} : {})}
}
