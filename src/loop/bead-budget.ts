/**
 * Per-bead budgets (SPEC 14.6): every dispatch made for a bead adds its spend to the
 * bead (`helix-tokens` / `helix-cost`); a bead at its cap is not dispatched again: it
 * is blocked with the note `BUDGET [<ts>]: <spent> of <cap>` and listed as a blocker.
 * An attempt already in flight is never killed for it.
 */
import type {Bead} from '../tracker/types.js'
import {spendOf, type Spend} from '../tracker/spend-fields.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {Scope} from './scope.js'

/** the per-bead caps, from the options */
export type CapsScope = Scope<{o: 'maxBeadTokens' | 'maxBeadCost'}>
/** adding a dispatch's spend to its bead */
export type SpendScope = Scope<{d: 'tracker'; run: 'log'}>
/** blocking a bead at its cap: the tracker's label and note, the skip list, the line and the notification */
export type BudgetScope = CapsScope & Scope<{d: 'tracker' | 'out'; ledger: 'attemptsOf' | 'skip' | 'clearBackoff'; run: 't' | 'now' | 'notify'}>

export interface BeadCaps {
  maxBeadTokens?: number
  maxBeadCost?: number
}

/** pure: `<spent> of <cap>` when the spend reached a cap, else null */
export function beadOverBudget(spend: Spend, caps: BeadCaps): string | null {
  if (caps.maxBeadTokens !== undefined && caps.maxBeadTokens > 0 && spend.tokens >= caps.maxBeadTokens) return `${spend.tokens} of ${caps.maxBeadTokens} tokens`
  if (caps.maxBeadCost !== undefined && caps.maxBeadCost > 0 && spend.costUsd >= caps.maxBeadCost) return `$${spend.costUsd.toFixed(2)} of $${caps.maxBeadCost.toFixed(2)}`
  return null
}

const caps = (r: CapsScope): BeadCaps => ({maxBeadTokens: r.o.maxBeadTokens, maxBeadCost: r.o.maxBeadCost})

/** a per-bead cap is set (without one, nothing is read to check it) */
export const hasBeadCaps = (r: CapsScope): boolean => (r.o.maxBeadTokens ?? 0) > 0 || (r.o.maxBeadCost ?? 0) > 0

/** adds a dispatch's spend to its bead; a failed write is logged, never fatal (the run's own totals still count) */
export async function recordBeadSpend(r: SpendScope, id: string, tokens: number, costUsd: number): Promise<void> {
  if (tokens <= 0 && costUsd <= 0) return
  try {
    await r.d.tracker.addSpend(id, tokens, costUsd)
  } catch (error) {
    r.log?.event('bead spend not recorded', {bead: id, tokens, cost_usd: costUsd, error: errorMessage(error)}, 'warn')
  }
}

/** blocks `b` when it reached its cap; true when it did (the caller does not dispatch it) */
export async function blockIfOverBudget(r: BudgetScope, b: Bead | undefined): Promise<boolean> {
  if (!b) return false
  const over = beadOverBudget(spendOf(b), caps(r))
  if (!over) return false
  const id = b.id
  const reason = `bead budget reached: ${over}`
  const attempts = r.ledger.attemptsOf(id)
  r.ledger.skip(id, reason, attempts)
  r.ledger.clearBackoff(id)
  r.d.out.both(`helix: [${r.t()}] blocking ${sanitize(id)}: ${over} (bead budget)`)
  void r.notify('bead_blocked', {bead: id, title: b.title ?? '', reason, attempts})
  if (!(b.labels ?? []).includes('blocked')) await r.d.tracker.addLabel(id, 'blocked')
  const already = (b.notes ?? '').split('\n').some((line) => line.startsWith('BUDGET [') && line.endsWith(`]: ${over}`))
  if (!already) await r.d.tracker.appendNote(id, `BUDGET [${r.now().toISOString()}]: ${over}`)
  return true
}
