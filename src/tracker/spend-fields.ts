/** Per-bead spend fields (SPEC 14.6), pure: the keys on the bead and how to read them. */
import type {Bead} from './types.js'

export const SPEND_TOKENS = 'helix-tokens'
export const SPEND_COST = 'helix-cost'

export interface Spend {
  tokens: number
  costUsd: number
}

function num(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : 0
  return Number.isFinite(n) && n > 0 ? n : 0
}

/** what a bead has spent so far (0 for a bead that never reported anything) */
export function spendOf(b: Bead): Spend {
  return {tokens: num(b[SPEND_TOKENS]), costUsd: num(b[SPEND_COST])}
}
