// The look at every pull-request claim (SPEC 20.5) with a fake forge and fleet: what is said
// once, what is counted, and that claims without a pull request are not the sweep's business.
import {describe, expect, it} from 'vitest'
import {createSweep} from '../../src/landing/pr-sweep.js'
import type {Fleet} from '../../src/remote/fleet.js'
import type {Forge, PrView} from '../../src/forge/types.js'
import type {RemoteBase} from '../../src/remote/base.js'
import type {RemoteClaim} from '../../src/remote/claim-refs.js'

const claim = (bead: string, pr_url?: string): RemoteClaim => ({
  bead,
  ref: `refs/helix/claims/${bead}`,
  sha: `sha-${bead}`,
  message: {host: 'host-b', run: 'r', pid: 1, attempt: 1, claimed_at: '2026-11-27T00:00:00.000Z', expires_at: '9999-12-31T23:59:59.000Z', ...(pr_url ? {pr_url} : {})},
  committedAt: new Date(0),
  expiresAt: new Date(8.64e15),
})

function setup(views: Record<string, Partial<PrView>>, claims: RemoteClaim[], git: (args: string[]) => {code: number; stdout: string; stderr: string} = () => ({code: 1, stdout: '', stderr: ''}), tip: string | null = null, closedAtTip: string[] = []) {
  const lines: string[] = []
  const released: string[] = []
  const viewed: string[] = []
  const forge = {
    name: 'gh',
    view: async (ref: string) => {
      viewed.push(ref)
      const v = views[ref]
      return v ? ({url: ref, state: 'open', mergedAt: null, mergeCommit: null, mergeable: 'mergeable', checks: 'passing', createdAt: null, lastComment: null, ...v} as PrView) : null
    },
  } as unknown as Forge
  const fleet = {
    claims: {list: async () => claims, release: async (bead: string) => (released.push(bead), {ok: true, sha: ''})},
    recordFailure: async () => {},
  } as unknown as Fleet
  const plain = {git: async (args: string[]) => git(args), push: async () => ({ok: true, unreachable: false, refs: [], message: ''}), fetch: async () => tip, trackerAt: async () => closedAtTip.map((id) => JSON.stringify({id, title: id, status: 'closed'}) + '\n').join('')} as unknown as RemoteBase
  const sweep = createSweep({root: '/nowhere', remote: 'origin', base: 'main', trackerRel: '.ddx/beads.jsonl', scratch: '/nowhere/s', fleet, plain, forge, now: () => new Date('2026-11-27T01:00:00Z'), log: (l) => lines.push(l), note: async () => {}})
  return {sweep, lines, released, viewed}
}

describe('the pull-request sweep', () => {
  it('a failing required check leaves the pull request for a person, said once; open ones are listed, whichever host opened them', async () => {
    const s = setup({'https://f/1': {checks: 'failing'}, 'https://f/2': {checks: 'pending'}}, [claim('hx-1', 'https://f/1'), claim('hx-2', 'https://f/2'), claim('hx-3')])
    expect(await s.sweep.run()).toBe(0)
    expect(await s.sweep.run()).toBe(0)
    expect(s.lines.filter((l) => l.includes('a required check fails on https://f/1; the pull request stays for a person'))).toHaveLength(1)
    expect(s.sweep.open().map((p) => [p.bead, p.host, p.view?.checks])).toEqual([
      ['hx-1', 'host-b', 'failing'],
      ['hx-2', 'host-b', 'pending'],
    ])
    expect([...s.sweep.stuck().keys()]).toEqual(['hx-1'])
    // a plain lease claim is an attempt in flight, not a pull request
    expect(s.viewed.filter((u) => !u.startsWith('https://f/'))).toEqual([])
    expect(s.released).toEqual([])
  })

  it('merged: the claim goes and the bead counts as changed', async () => {
    const s = setup({'https://f/1': {state: 'merged', mergeCommit: 'abcdef1234567890'}}, [claim('hx-1', 'https://f/1')], undefined, 'tipsha', ['hx-1'])
    expect(await s.sweep.run()).toBe(1)
    expect(s.released).toEqual(['hx-1'])
    expect(s.lines).toEqual(['helix: [01:00:00] merged hx-1 (https://f/1, abcdef123456)'])
    expect(s.sweep.open()).toEqual([])
  })

  it("merged by the forge's word but the bead not closed on the base: nothing freed, said once, still listed", async () => {
    const s = setup({'https://f/1': {state: 'merged'}}, [claim('hx-1', 'https://f/1')], undefined, 'tipsha', [])
    expect(await s.sweep.run()).toBe(0)
    expect(await s.sweep.run()).toBe(0)
    expect(s.released).toEqual([])
    expect(s.lines).toEqual(["helix: [01:00:00] hx-1: gh says https://f/1 merged, but hx-1 is not closed on main; its work stays on helix/hx-1 (to free the bead: git push origin :refs/helix/claims/hx-1); the pull request stays for a person"])
    expect(s.sweep.open().map((p) => [p.bead, p.view?.state])).toEqual([['hx-1', 'merged']])
    expect([...s.sweep.stuck().keys()]).toEqual(['hx-1'])
  })

  it('a conflicting pull request whose branch could not be fetched is rebased at the next look, not skipped until something moves', async () => {
    const fetches: string[][] = []
    const git = (args: string[]) => {
      if (args[0] === 'ls-remote') return {code: 0, stdout: 'headsha\trefs/heads/helix/hx-1\n', stderr: ''}
      if (args[0] === 'fetch') fetches.push(args)
      return {code: 1, stdout: '', stderr: 'fatal: the remote hung up'}
    }
    const s = setup({'https://f/1': {mergeable: 'conflicting'}}, [claim('hx-1', 'https://f/1')], git, 'tipsha')
    await s.sweep.run()
    await s.sweep.run()
    expect(fetches).toHaveLength(2)
    expect(s.sweep.open().map((p) => p.bead)).toEqual(['hx-1'])
  })
})
