// The tracker-only pull request of --land pr (SPEC 20.5): beads helix filed on refs/helix/state
// reach the protected base through one pull request from helix/tracker, against a real bare
// remote and the gh stand-in.
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {ghForge} from '../../src/forge/gh.js'
import {createRemoteBase} from '../../src/remote/base.js'
import {createStateRef, NEW_MARK} from '../../src/remote/state-ref.js'
import {carriedTracker, createTrackerPr} from '../../src/landing/pr-tracker.js'
import {tipBeads} from '../remote/fleet-harness.js'
import {FORGE_BIN, bead, g, gitTestEnv, protectedForge} from './helpers.js'

describe('the helix/tracker pull request', () => {
  it('carries filed and closed beads only, never bookkeeping', () => {
    const base = [bead('hx-1'), bead('hx-2')].map((b) => JSON.stringify(b)).join('\n') + '\n'
    expect(carriedTracker(base, new Map([['hx-1', {id: 'hx-1', notes: 'failed once', 'helix-attempts': 1}]]))).toBeNull()
    const c = carriedTracker(base, new Map<string, Record<string, unknown>>([
      ['hx-1', {id: 'hx-1', notes: 'n'}],
      ['hx-2', {id: 'hx-2', status: 'closed'}],
      ['hx-9', {...bead('hx-9', {title: 'review finding'}), [NEW_MARK]: true}],
    ]))
    expect(c).toMatchObject({filed: 1, closed: 1})
    const lines = c?.text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines?.map((b) => [b.id, b.status, b.notes ?? null])).toEqual([
      ['hx-1', 'open', null],
      ['hx-2', 'closed', null],
      ['hx-9', 'open', null],
    ])
    expect(lines?.some((b) => NEW_MARK in b)).toBe(false)
  })

  it('opens one pull request, updates its branch when more is filed, and has nothing to do once it merged', async () => {
    const f = protectedForge([bead('hx-1')])
    const dir = f.clone('host-a')
    const scratch = path.join(f.dir, 'scratch')
    const env = {...gitTestEnv, ...f.env}
    const state = createStateRef({cwd: dir, remote: 'origin', env, scratch})
    const plain = createRemoteBase({root: dir, remote: 'origin', base: 'main', trackerRel: '.ddx/beads.jsonl', env, scratch})
    const lines: string[] = []
    const tpr = createTrackerPr({remote: 'origin', base: 'main', host: 'host-a', plain, overlay: async () => (await state.read())?.overlay ?? new Map(), forge: ghForge({cwd: dir, env, bin: path.join(FORGE_BIN, 'gh')}), autoMerge: 'squash', log: (l) => lines.push(l)})
    expect(await tpr.tick()).toBe('nothing')
    await state.update((o) => new Map([...o, ['hx-7', {...bead('hx-7', {title: 'filed by review'}), [NEW_MARK]: true}]]))
    expect(await tpr.tick()).toBe('opened')
    expect(await tpr.tick()).toBe('unchanged')
    await state.update((o) => new Map([...o, ['hx-8', {...bead('hx-8'), [NEW_MARK]: true}]]))
    expect(await tpr.tick()).toBe('updated')
    expect(f.prs().map((p) => [p.head, p.state, p.auto])).toEqual([['helix/tracker', 'OPEN', 'squash']])
    expect(g(f.bare, 'show', 'helix/tracker:.ddx/beads.jsonl')).toMatch(/hx-7[\s\S]*hx-8/)
    // the forge merges it (the only push of main); the beads are on the base and nothing is left to carry
    expect(f.gh('forge', 'auto').code).toBe(0)
    expect(tipBeads(f.bare).map((b) => b.id)).toEqual(['hx-1', 'hx-7', 'hx-8'])
    expect(await tpr.tick()).toBe('nothing')
    expect(f.pushes().filter((p) => p.ref === 'refs/heads/main').every((p) => p.forge)).toBe(true)
    expect(lines[0]).toMatch(/^helix: opened the tracker pull request https:\/\/forge\.test\/team\/repo\/pull\/1 \(1 filed, 0 closed\)$/)
  })
})
