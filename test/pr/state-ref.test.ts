// refs/helix/state (SPEC 20.5): the overlay of failure bookkeeping, laid over the base's
// tracker, updated by compare-and-set against a real bare remote.
import {describe, expect, it} from 'vitest'
import {applyOverlay, createStateRef, diffIntoOverlay, NEW_MARK, parseOverlay, serializeOverlay} from '../../src/remote/state-ref.js'
import {parseTracker} from '../../src/tracker/codec.js'
import {bead, g, gitTestEnv, protectedForge} from './helpers.js'

const tracker = (...beads: Array<Record<string, unknown>>) => parseTracker(beads.map((b) => JSON.stringify(b)).join('\n') + '\n', 't')

describe('the overlay', () => {
  it('lays bookkeeping over open beads, adds beads helix filed, and leaves out beads closed at the base', () => {
    const snap = tracker(bead('hx-1'), bead('hx-2', {status: 'closed'}))
    const ov = parseOverlay(serializeOverlay(new Map([
      ['hx-1', {id: 'hx-1', notes: 'PR CLOSED: wrong', 'helix-attempts': 1}],
      ['hx-2', {id: 'hx-2', notes: 'old'}],
      ['hx-9', {id: 'hx-9', title: 'filed by a review', status: 'open', [NEW_MARK]: true}],
    ])))
    expect(applyOverlay(snap, ov)).toEqual({stale: ['hx-2']})
    expect(snap.byId.get('hx-1')).toMatchObject({notes: 'PR CLOSED: wrong', 'helix-attempts': 1, status: 'open'})
    expect(snap.byId.get('hx-2')?.notes).toBeUndefined()
    expect(snap.byId.get('hx-9')).toMatchObject({title: 'filed by a review'})
    expect(snap.byId.get('hx-9')?.[NEW_MARK]).toBeUndefined()
  })

  it('records only what changed, and whole beads for new ones', () => {
    const before = tracker(bead('hx-1'), bead('hx-2'))
    const after = tracker(bead('hx-1', {'helix-attempts': 2}), bead('hx-2'), bead('hx-3', {title: 'new'}))
    const next = diffIntoOverlay(new Map([['hx-1', {id: 'hx-1', notes: 'n'}]]), before, after, new Set(['hx-1', 'hx-2']))
    expect([...next.values()]).toEqual([{id: 'hx-1', notes: 'n', 'helix-attempts': 2}, expect.objectContaining({id: 'hx-3', title: 'new', [NEW_MARK]: true})])
  })
})

describe('refs/helix/state on a remote', () => {
  it('two hosts updating at once both land their entry (compare-and-set, retried)', async () => {
    const f = protectedForge([bead('hx-1')])
    const refs = ['a', 'b'].map((h) => createStateRef({cwd: f.clone(`host-${h}`), remote: 'origin', env: gitTestEnv, scratch: `${f.dir}/scratch-${h}`}))
    const results = await Promise.all(refs.map((r, i) => r.update((o) => new Map([...o, [`hx-${i + 1}`, {id: `hx-${i + 1}`, 'helix-attempts': 1}]]))))
    expect(results).toEqual(['pushed', 'pushed'])
    const read = await refs[0]?.read()
    expect([...(read?.overlay.keys() ?? [])].sort()).toEqual(['hx-1', 'hx-2'])
    expect(await refs[1]?.update((o) => o)).toBe('unchanged')
    // the protected base was never pushed
    expect(f.pushes().map((p) => p.ref).every((r) => r === 'refs/helix/state')).toBe(true)
    expect(g(f.bare, 'log', '--format=%s', 'main')).toBe('seed')
  })
})
