/** Dependencies (split out of ops.ts): add (refusing cycles) and remove, both fenced. */
import {HelixError, EXIT} from '../util/errors.js'
import type {ProjectPaths} from '../util/root.js'
import type {Dependency, TrackerSnapshot} from './types.js'
import {mutateTracker} from './store.js'
import {depIds} from './queries.js'
import {getBead, isoNow, notFound} from './bead-edit.js'
import type {Fence} from './claims.js'
import {checkFence} from './claims.js'

/** Path from `from` to `to` following dependencies, or null. */
function depPath(snap: TrackerSnapshot, from: string, to: string): string[] | null {
  const prev = new Map<string, string | null>([[from, null]])
  const queue = [from]
  while (queue.length) {
    const cur = queue.shift()!
    if (cur === to) {
      const out: string[] = []
      for (let x: string | null = cur; x !== null; x = prev.get(x) ?? null) out.unshift(x)
      return out
    }
    const b = snap.byId.get(cur)
    if (!b) continue
    for (const d of depIds(b)) {
      if (!prev.has(d)) {
        prev.set(d, cur)
        queue.push(d)
      }
    }
  }
  return null
}

export async function depAdd(paths: ProjectPaths, id: string, dependsOn: string, opts: {now?: Date; type?: string} & Fence = {}): Promise<{changed: boolean}> {
  if (id === dependsOn) throw new HelixError(`${id} cannot depend on itself`, EXIT.ERROR)
  return mutateTracker<{changed: boolean}>(paths, (snap) => {
    const b = getBead(snap, id)
    checkFence(b, opts)
    if (!snap.byId.has(dependsOn)) throw notFound(dependsOn)
    if (depIds(b).includes(dependsOn)) return {beads: null, result: {changed: false}}
    const cycle = depPath(snap, dependsOn, id)
    if (cycle) throw new HelixError(`dependency cycle: ${[id, ...cycle].join(' -> ')}`, EXIT.ERROR)
    const now = isoNow(opts.now)
    const dep: Dependency = {issue_id: id, depends_on_id: dependsOn, type: opts.type ?? 'blocks', created_at: now}
    b.dependencies = [...(Array.isArray(b.dependencies) ? b.dependencies : []), dep]
    b.updated_at = now
    return {beads: snap.beads, result: {changed: true}}
  })
}

export async function depRemove(paths: ProjectPaths, id: string, dependsOn: string, opts: {now?: Date} & Fence = {}): Promise<{changed: boolean}> {
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    checkFence(b, opts)
    if (!depIds(b).includes(dependsOn)) throw new HelixError(`${id} does not depend on ${dependsOn}`, EXIT.ERROR)
    b.dependencies = (b.dependencies ?? []).filter((d) => !(d && d.depends_on_id === dependsOn))
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: {changed: true}}
  })
}
