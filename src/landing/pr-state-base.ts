/**
 * The remote base as the tracker port of a `--land pr` run sees it (SPEC 20.5):
 * reads are the tracker at the base tip with `refs/helix/state` laid over it;
 * tracker writes (failure notes, attempt counts, `blocked`, spend, new beads) go
 * to `refs/helix/state` by compare-and-set instead of to the protected base.
 * Everything else is the plain remote base.
 */
import {parseTracker, serializeTracker} from '../tracker/codec.js'
import type {RemoteBase} from '../remote/base.js'
import {editTrackerText} from '../remote/scratch-tracker.js'
import {applyOverlay, createStateRef, diffIntoOverlay, NEW_MARK, type Overlay, type StateRef} from '../remote/state-ref.js'

export interface StateBase extends RemoteBase {
  state: StateRef
  /** the last overlay read (for status lines); refreshed at most every `ttlMs` */
  overlay(): Promise<Overlay>
}

export function stateBase(plain: RemoteBase, o: {root: string; remote: string; env: NodeJS.ProcessEnv; scratch: string; ttlMs?: number}): StateBase {
  const state = createStateRef({cwd: o.root, remote: o.remote, env: o.env, scratch: o.scratch})
  let cached: {at: number; overlay: Overlay} | null = null
  const ttl = o.ttlMs ?? 2000

  async function overlay(): Promise<Overlay> {
    if (cached && Date.now() - cached.at < ttl) return cached.overlay
    const r = await state.read()
    if (r) cached = {at: Date.now(), overlay: r.overlay}
    return cached?.overlay ?? new Map()
  }

  /** the tracker text at `commit` with the overlay laid over it; new beads not yet on the base wait for the tracker pull request */
  function view(baseText: string, ov: Overlay): string {
    const snap = parseTracker(baseText, 'base')
    const onBase = new Set(snap.byId.keys())
    applyOverlay(snap, ov)
    for (const [id, e] of ov) {
      const b = snap.byId.get(id)
      // a worktree starts from the base, where this bead is not yet: nobody selects it before it arrives
      if (b && e[NEW_MARK] === true && !onBase.has(id) && (b.status ?? 'open') === 'open') {
        b.status = 'in_progress'
        b.owner = 'helix/tracker (awaiting merge)'
      }
    }
    return serializeTracker(snap.beads)
  }

  return {
    ...plain,
    state,
    overlay,
    async trackerAt(commit) {
      return view(await plain.trackerAt(commit), await overlay())
    },
    async commitTracker(_message, edit) {
      let changed = false
      const r = await state.update(async (ov) => {
        const tip = await plain.fetch()
        if (!tip) throw new Error(`the remote ${o.remote} is unreachable`)
        const baseText = await plain.trackerAt(tip)
        const base = parseTracker(baseText, 'base')
        const beforeText = view(baseText, ov)
        const afterText = await editTrackerText(o.scratch, 'state-edit', beforeText, edit)
        if (afterText === beforeText) return null
        const next = diffIntoOverlay(ov, parseTracker(beforeText, 'before'), parseTracker(afterText, 'after'), new Set(base.byId.keys()))
        // a bead closed at the base no longer needs its overlay
        for (const id of [...next.keys()]) if (base.byId.get(id)?.status === 'closed') next.delete(id)
        changed = true
        return next
      })
      cached = null
      if (r === 'unreachable') return 'unreachable'
      return changed && r === 'pushed' ? 'pushed' : 'unchanged'
    },
  }
}
