/**
 * Per-bead spend (SPEC 14.6): `helix-tokens` / `helix-cost` on the bead, summed over
 * every attempt of every run, added under the tracker lock so crashes, restarts and
 * other hosts all see the same total.
 */
import type {ProjectPaths} from '../util/root.js'
import {mutateTracker} from './store.js'
import {isoNow, notFound} from './ops.js'
import {SPEND_COST, SPEND_TOKENS, spendOf, type Spend} from './spend-fields.js'

export {SPEND_COST, SPEND_TOKENS, spendOf, type Spend} from './spend-fields.js'

/** adds one dispatch's spend to the bead; returns the new total */
export async function addSpend(paths: ProjectPaths, id: string, tokens: number, costUsd: number, opts: {now?: Date} = {}): Promise<Spend> {
  return mutateTracker(paths, (snap) => {
    const b = snap.byId.get(id)
    if (!b) throw notFound(id)
    const s = spendOf(b)
    const next = {tokens: s.tokens + Math.max(0, tokens), costUsd: Math.round((s.costUsd + Math.max(0, costUsd)) * 1e6) / 1e6}
    b[SPEND_TOKENS] = next.tokens
    if (next.costUsd > 0) b[SPEND_COST] = next.costUsd
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: next}
  })
}
