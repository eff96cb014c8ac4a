// SPEC 20.4 and 18.1 against a resolve that throws the work away (session 34's
// adversary), on the real landing adapter and real git: a resolve that resets the
// attempt's branch to the base tip is not done (its landing would close the bead
// with none of its work), and the commits it dropped stay on a preserved ref. And a
// candidate whose every commit the base already holds lands as a no-op, in words
// that say so, not as "the base is not at the landed tip".
import {rmSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {agentCommit, g, gitTestEnv, makeRepo, write} from './helpers.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function setup(check?: string) {
  const root = makeRepo()
  dirs.push(root)
  const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date('2026-11-27T02:00:00Z'), lockWaitMs: 5000, ...(check ? {landCheck: {command: check, timeoutSec: 60, stallSec: 0, graceMs: 200}} : {})})
  return {root, landing}
}
const opCommit = (root: string, files: Record<string, string>, msg = 'operator') => {
  for (const [f, t] of Object.entries(files)) write(root, f, t)
  g(root, 'add', '-A')
  g(root, 'commit', '-q', '-m', msg)
}

describe('a resolve that drops the work (SPEC 20.4, 18.1)', () => {
  for (const check of [undefined, 'true']) {
    it(`resetting the branch to the base tip is not done; the dropped commits are kept and named${check ? ' (with a land check)' : ''}`, async () => {
      const {root, landing} = setup(check)
      const ws = await landing.prepare('hx-1', 1, 1)
      agentCommit(ws.dir, 'a.ts', 'line1 agent\nline2\nline3\nline4\nline5\n')
      agentCommit(ws.dir, 'c.ts', 'agent only\n')
      opCommit(root, {'a.ts': 'line1 base\nline2\nline3\nline4\nline5\n', 'd.ts': 'another bead\n'})
      const base = g(root, 'rev-parse', 'main')
      const r = await landing.land(ws, {repair: true})
      const repair = !r.landed ? r.repair : undefined
      expect(repair).toMatchObject({kind: 'conflict', paths: ['a.ts']})
      // the "resolve": throw everything away
      g(ws.dir, 'rebase', '--abort')
      g(ws.dir, 'reset', '-q', '--hard', repair!.onto)
      const bad = await landing.verifyRepair!(ws, repair!)
      expect(bad).toBe("the resolve dropped all of the attempt's commits (HEAD is the base tip); they are kept at refs/helix/preserved/hx-1/1: rebase them onto the base tip again")
      expect(g(root, 'show', 'refs/helix/preserved/hx-1/1:c.ts')).toBe('agent only')
      // asked again, the same ref (no second copy)
      expect(await landing.verifyRepair!(ws, repair!)).toBe(bad)
      // the rounds are spent: the preserve names the kept work, not the base's tip
      const kept = await landing.preserve(ws, `not resolved: ${bad}`)
      expect(kept).toBe('refs/helix/preserved/hx-1/1')
      expect(g(root, 'for-each-ref', '--format=%(refname)', 'refs/helix/preserved/')).toBe('refs/helix/preserved/hx-1/1')
      expect(g(root, 'rev-parse', 'main')).toBe(base)
    })
  }

  it('a resolve that drops the work and then does it again is done, and lands', async () => {
    const {root, landing} = setup()
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'line1 agent\nline2\nline3\nline4\nline5\n')
    opCommit(root, {'a.ts': 'line1 base\nline2\nline3\nline4\nline5\n'})
    const r = await landing.land(ws, {repair: true})
    const repair = !r.landed ? r.repair! : null
    g(ws.dir, 'rebase', '--abort')
    g(ws.dir, 'reset', '-q', '--hard', repair!.onto)
    expect(await landing.verifyRepair!(ws, repair!)).toMatch(/dropped all of the attempt's commits/)
    agentCommit(ws.dir, 'a.ts', 'line1 base agent\nline2\nline3\nline4\nline5\n', 'redo')
    expect(await landing.verifyRepair!(ws, repair!)).toBeNull()
    const l = await landing.land(ws, {repair: true})
    expect(l).toMatchObject({landed: true, commits: [expect.any(String)]})
    expect(g(root, 'show', 'main:a.ts').split('\n')[0]).toBe('line1 base agent')
  })
})

describe('a candidate the base already holds', () => {
  for (const check of [undefined, 'true']) {
    it(`lands as a no-op with zero commits, the base unmoved${check ? ' (with a land check)' : ''}`, async () => {
      const {root, landing} = setup(check)
      const ws = await landing.prepare('hx-1', 1, 1)
      agentCommit(ws.dir, 'c.ts', 'same change\n')
      // another bead landed the very same change meanwhile: the rebase drops the attempt's commit
      opCommit(root, {'c.ts': 'same change\n'}, 'the same change elsewhere')
      const base = g(root, 'rev-parse', 'main')
      const r = await landing.land(ws, {})
      expect(r).toEqual({landed: true, sha: base, commits: []})
      expect(g(root, 'rev-parse', 'main')).toBe(base)
    })
  }
})
