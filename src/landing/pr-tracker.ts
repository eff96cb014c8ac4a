/**
 * The tracker-only pull request of `--land pr` (SPEC 20.5): tracker changes that
 * are not an attempt's own close — beads helix filed (review findings, drain
 * actions, decompositions) and beads it closed (epics) — live on `refs/helix/state`
 * at once, and reach the base through one pull request from `helix/tracker`,
 * opened or updated at most once a look (every `--pr-poll`), auto-merged like the
 * others. Its branch is the base tip plus one commit: the base's tracker with
 * those changes applied; it is rebuilt (and force-pushed, helix's own branch)
 * whenever they change. Bookkeeping (notes, counts, backoff, spend) stays on the
 * state ref and never goes into it.
 */
import {parseTracker, serializeTracker} from '../tracker/codec.js'
import type {Bead} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import {errorMessage} from '../util/errors.js'
import type {Forge, MergeMethod} from '../forge/types.js'
import type {RemoteBase} from '../remote/base.js'
import {NEW_MARK, type Overlay} from '../remote/state-ref.js'

export const TRACKER_BRANCH = 'helix/tracker'

/** the base's tracker with the overlay's filed and closed beads applied; null when there is nothing to carry */
export function carriedTracker(baseText: string, ov: Overlay): {text: string; filed: number; closed: number} | null {
  const snap = parseTracker(baseText, 'base')
  let filed = 0
  let closed = 0
  for (const [id, e] of ov) {
    const b = snap.byId.get(id)
    if (!b && e[NEW_MARK] === true) {
      const {[NEW_MARK]: _mark, ...fields} = e
      void _mark
      const nb = {...fields, id} as Bead
      snap.beads.push(nb)
      snap.byId.set(id, nb)
      filed++
    } else if (b && e.status === 'closed' && b.status !== 'closed') {
      b.status = 'closed'
      if (typeof e.closed_at === 'string') b.closed_at = e.closed_at
      if (typeof e.updated_at === 'string') b.updated_at = e.updated_at
      closed++
    }
  }
  return filed + closed > 0 ? {text: serializeTracker(snap.beads), filed, closed} : null
}

export interface TrackerPrOptions {
  remote: string
  base: string
  host: string
  plain: RemoteBase
  overlay: () => Promise<Overlay>
  forge: Forge
  autoMerge: MergeMethod | null
  log: (line: string) => void
}

export function createTrackerPr(o: TrackerPrOptions): {tick(): Promise<'opened' | 'updated' | 'unchanged' | 'nothing'>} {
  const ref = `refs/heads/${TRACKER_BRANCH}`
  async function branchTip(): Promise<string | null> {
    const r = await o.plain.git(['ls-remote', o.remote, ref])
    return r.code === 0 ? r.stdout.split('\t')[0]?.trim() || null : null
  }
  return {
    async tick() {
      const tip = await o.plain.fetch()
      if (!tip) return 'nothing'
      const carried = carriedTracker(await o.plain.trackerAt(tip), await o.overlay())
      if (!carried) return 'nothing'
      const current = await branchTip()
      if (current) {
        // the branch already says exactly this on top of this base tip: leave it
        await o.plain.git(['fetch', '-q', '--no-tags', '--no-write-fetch-head', o.remote, ref])
        const parent = (await o.plain.git(['rev-parse', '-q', '--verify', `${current}^`])).stdout.trim()
        if (parent === tip && (await o.plain.trackerAt(current)) === carried.text) return 'unchanged'
      }
      const next = await o.plain.trackerCommit(tip, carried.text, `helix(${o.host}): tracker changes (${carried.filed} filed, ${carried.closed} closed)`)
      const p = await o.plain.push([`--force-with-lease=${ref}:${current ?? ''}`, o.remote, `${next}:${ref}`])
      if (!p.ok) return 'unchanged'
      const open = await o.forge.view(TRACKER_BRANCH)
      if (open?.state === 'open') {
        o.log(`helix: updated the tracker pull request ${sanitize(open.url)} (${carried.filed} filed, ${carried.closed} closed)`)
        return 'updated'
      }
      try {
        const body = `Tracker changes helix made while landing through pull requests: ${carried.filed} bead(s) filed, ${carried.closed} closed.\n\nOnly \`.ddx/beads.jsonl\` changes. helix rebuilds this branch on the base whenever they change.`
        const {url} = await o.forge.create({base: o.base, head: TRACKER_BRANCH, title: `helix: tracker changes (${carried.filed} filed, ${carried.closed} closed)`, body})
        if (o.autoMerge) await o.forge.mergeAuto(url, o.autoMerge).catch(() => undefined)
        o.log(`helix: opened the tracker pull request ${sanitize(url)} (${carried.filed} filed, ${carried.closed} closed)`)
        return 'opened'
      } catch (error) {
        o.log(`helix: the tracker pull request could not be opened: ${sanitize(errorMessage(error))}`)
        return 'unchanged'
      }
    },
  }
}
