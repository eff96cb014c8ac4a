/**
 * The flags of `--land pr` (SPEC 20.5), validated before anything is written:
 * `--pr-auto-merge squash|merge|rebase`, `--pr-wait SECONDS` (default 1800),
 * `--pr-poll SECONDS` (default 60), `--pr-command CMD`. Each also comes from its
 * HELIX_PR_* variable (and so from `.helix/config.json`).
 */
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

export interface PrFlagInput {
  'pr-auto-merge'?: string
  'pr-wait'?: string
  'pr-poll'?: string
  'pr-command'?: string
}

import type {PrFlags} from '../app/pr-wiring.js'
export type {PrFlags}

const ENV: Record<keyof PrFlagInput, string> = {'pr-auto-merge': 'HELIX_PR_AUTO_MERGE', 'pr-wait': 'HELIX_PR_WAIT', 'pr-poll': 'HELIX_PR_POLL', 'pr-command': 'HELIX_PR_COMMAND'}

/** null unless `land` is 'pr'; throws HelixError(1) naming the flag on bad input */
export function parsePrFlags(land: string, f: PrFlagInput, env: NodeJS.ProcessEnv, hasRemote: boolean): PrFlags | null {
  const given = (Object.keys(ENV) as Array<keyof PrFlagInput>).filter((k) => f[k] !== undefined)
  if (land !== 'pr') {
    if (given.length > 0) throw new HelixError(`--${given[0]} needs --land pr`, EXIT.ERROR)
    return null
  }
  if (!hasRemote) throw new HelixError(`--land pr needs --remote <name>: pull requests are opened on a git remote's forge (see docs/pr-landing.md)`, EXIT.ERROR)
  const pick = (k: keyof PrFlagInput): {raw: string; name: string} | null => {
    if (f[k] !== undefined) return {raw: f[k] as string, name: `--${k}`}
    const e = env[ENV[k]]
    return e !== undefined && e.trim() !== '' ? {raw: e, name: ENV[k]} : null
  }
  const seconds = (k: keyof PrFlagInput, def: number, min: number): number => {
    const v = pick(k)
    if (!v) return def
    const t = v.raw.trim()
    const n = Number(t)
    if (!/^\d+$/.test(t) || !Number.isSafeInteger(n) || n < min || n > 7 * 86400) throw new HelixError(`invalid ${v.name} '${sanitize(v.raw).slice(0, 40)}': expected seconds, a whole number ≥ ${min}`, EXIT.ERROR)
    return n
  }
  const am = pick('pr-auto-merge')
  if (am && !/^(squash|merge|rebase)$/.test(am.raw.trim())) throw new HelixError(`invalid ${am.name} '${sanitize(am.raw).slice(0, 40)}': expected squash, merge or rebase`, EXIT.ERROR)
  const cmd = pick('pr-command')
  if (cmd && cmd.raw.trim() === '') throw new HelixError(`invalid ${cmd.name}: expected a command`, EXIT.ERROR)
  return {
    autoMerge: am ? (am.raw.trim() as PrFlags['autoMerge']) : null,
    waitSec: seconds('pr-wait', 1800, 0),
    pollSec: seconds('pr-poll', 60, 1),
    command: cmd ? cmd.raw.trim() : null,
  }
}
