/** SPEC 5.2 outcome table: first matching row wins. */
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {fingerprint, sameFingerprint, type Fingerprint} from './fingerprint.js'
import {childrenOf, statusOf} from './selection.js'

export type Outcome = 'COMPLETE' | 'SALVAGED' | 'DRIFT_CLOSED' | 'DRIFT' | 'DECOMPOSED' | 'FAILED' | 'NOT_COMPLETED'

export interface OutcomeInput {
  after: TrackerSnapshot
  id: string
  fingerprint: Fingerprint
  /** ids of the target's open children at selection */
  openChildrenBefore: ReadonlySet<string>
  rc: number
  timedOut: boolean
}

export function openChildIds(snap: TrackerSnapshot, id: string): Set<string> {
  const out = new Set<string>()
  for (const c of childrenOf(snap, id)) {
    const s = statusOf(c)
    if (s !== 'closed' && s !== 'cancelled') out.add(c.id)
  }
  return out
}

export function classifyOutcome(input: OutcomeInput): {outcome: Outcome; bead: Bead | undefined; newChildren: string[]} {
  const bead = input.after.byId.get(input.id)
  if (!bead) return {outcome: 'DRIFT', bead, newChildren: []}
  const same = sameFingerprint(input.fingerprint, fingerprint(bead))
  const closed = statusOf(bead) === 'closed'
  if (closed && same) return {outcome: input.rc === 0 && !input.timedOut ? 'COMPLETE' : 'SALVAGED', bead, newChildren: []}
  if (closed) return {outcome: 'DRIFT_CLOSED', bead, newChildren: []}
  if (!same) return {outcome: 'DRIFT', bead, newChildren: []}
  const newChildren = [...openChildIds(input.after, input.id)].filter((c) => !input.openChildrenBefore.has(c))
  if (newChildren.length > 0) return {outcome: 'DECOMPOSED', bead, newChildren}
  if (input.rc !== 0 || input.timedOut) return {outcome: 'FAILED', bead, newChildren: []}
  return {outcome: 'NOT_COMPLETED', bead, newChildren: []}
}
