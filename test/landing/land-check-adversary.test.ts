// SPEC 20.3 against a land check that misbehaves (session 34's adversary): a check
// runs the team's own command in the attempt's worktree, and what it does there
// (commit, reset, switch branches, leave files changed) must never decide what lands.
// The base only ever receives the candidate that was checked.
import {rmSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {makeTempDir} from '../support/tmp.js'
import {agentCommit, g, gitTestEnv, makeRepo, read, write} from './helpers.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function setup(command: string) {
  const root = makeRepo()
  const out = makeTempDir('helix-land-check-adv-')
  dirs.push(root, out)
  const env = {...gitTestEnv, OUT: out, ROOT: root, GIT_AUTHOR_NAME: 'check', GIT_AUTHOR_EMAIL: 'c@c', GIT_COMMITTER_NAME: 'check', GIT_COMMITTER_EMAIL: 'c@c'}
  const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env, now: () => new Date('2026-11-27T02:00:00Z'), lockWaitMs: 5000, landCheck: {command, timeoutSec: 60, stallSec: 0, graceMs: 200}})
  return {root, out, landing}
}
const tip = (root: string) => g(root, 'rev-parse', 'refs/heads/main')
const subjects = (root: string) => g(root, 'log', '--format=%s', 'main').split('\n')

describe('a land check that changes the candidate (SPEC 20.3)', () => {
  it('a check that commits: its unchecked commit never reaches the base; the work is kept', async () => {
    const {root, landing} = setup(`printf 'from the check\\n' > gen.ts && git add gen.ts && git commit -q -m 'made by the check'`)
    const before = tip(root)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const r = await landing.land(ws, {})
    expect(subjects(root)).not.toContain('made by the check')
    expect(r).toMatchObject({landed: false, reason: expect.stringMatching(/^the land check moved HEAD; fix the check so it never commits, resets or switches branches \(helix\/hx-1-1 [0-9a-f]{12} → [0-9a-f]{12}\)$/)})
    expect(tip(root)).toBe(before)
    const kept = !r.landed ? r.preservedRef : null
    expect(kept).toBe('refs/helix/preserved/hx-1/1')
    expect(g(root, 'log', '--format=%s', kept!)).toContain('edit a.ts')
  })

  it('a check that resets the branch to the base: nothing "lands" without the agent\'s commits; the commits are kept', async () => {
    const {root, landing} = setup(`git reset -q --hard "$HELIX_LAND_BASE"`)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const r = await landing.land(ws, {})
    expect(r).toMatchObject({landed: false, reason: expect.stringMatching(/^the land check moved HEAD; fix the check so it never commits, resets or switches branches \(helix\/hx-1-1 [0-9a-f]{12} → [0-9a-f]{12}\)$/)})
    const kept = !r.landed ? r.preservedRef : null
    expect(kept).toBe('refs/helix/preserved/hx-1/1')
    expect(g(root, 'show', `${kept}:a.ts`)).toBe('agent')
  })

  it('a check that switches the worktree to another branch: not landed, the work kept', async () => {
    const {root, landing} = setup(`git switch -q -c elsewhere && printf 'x\\n' > x.ts && git add x.ts && git commit -q -m elsewhere`)
    const before = tip(root)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const r = await landing.land(ws, {})
    expect(r).toMatchObject({landed: false, reason: expect.stringMatching(/^the land check switched branches; fix the check so it never commits, resets or switches branches \(helix\/hx-1-1 → elsewhere\)$/)})
    expect(tip(root)).toBe(before)
    expect(g(root, 'show', `${!r.landed ? r.preservedRef : ''}:a.ts`)).toBe('agent')
  })

  it('a check that leaves a tracked file changed (a lockfile rewrite) still lands when the base moved during it', async () => {
    // the first run of the check lands another commit on main, as another slot would, and rewrites b.ts
    const {root, landing} = setup(`printf 'rewritten by the check\\n' > b.ts; if [ ! -e "$OUT/once" ]; then touch "$OUT/once"; printf 'other\\n' > "$ROOT/other.txt"; git -C "$ROOT" add other.txt; git -C "$ROOT" commit -q -m other; fi`)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const r = await landing.land(ws, {})
    expect(r).toMatchObject({landed: true})
    expect(subjects(root).slice(0, 3)).toEqual(['edit a.ts', 'other', 'initial'])
    // what the check wrote is not the agent's work: it never reaches the base
    expect(read(root, 'b.ts')).toBe('export const b = 1\n')
  })

  it('a red check that left a tracked file changed: the repair round does not commit the check\'s change as the agent\'s', async () => {
    const {root, landing} = setup(`printf 'rewritten by the check\\n' > b.ts; if grep -q broken a.ts; then echo broken; exit 1; fi`)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'broken\n')
    const r = await landing.land(ws, {repair: true})
    const repair = !r.landed ? r.repair : undefined
    expect(repair).toMatchObject({kind: 'check'})
    write(ws.dir, 'a.ts', 'fixed\n')
    expect(await landing.verifyRepair!(ws, repair!)).toBeNull()
    expect((await landing.land(ws, {repair: true})).landed).toBe(true)
    expect(read(root, 'a.ts')).toBe('fixed\n')
    expect(read(root, 'b.ts')).toBe('export const b = 1\n')
  })
})

describe('a land check that prints megabytes (SPEC 20.3)', () => {
  it('its tail lines are bounded for the log and the next prompt; the whole output stays in .helix/land-check.log', async () => {
    const {landing} = setup(`head -c 3000000 /dev/zero | tr '\\0' x; echo; echo 'the last words'; exit 2`)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const r = await landing.land(ws, {repair: true})
    const repair = !r.landed && r.repair?.kind === 'check' ? r.repair : null
    expect(repair?.tail.at(-1)).toBe('the last words')
    const long = repair?.tail.at(-2) ?? ''
    expect(long.length).toBeLessThan(500)
    expect(long).toMatch(/^x{400}… \(\d+ more characters in the log\)$/)
    // the log keeps what the check printed last, in full lines
    expect(read(ws.dir, '.helix/land-check.log').endsWith('x\nthe last words\n')).toBe(true)
  })
})

describe('the base moving during every land check (SPEC 20.3)', () => {
  // each run of the check lands another commit on main (as other slots would), up to $MOVES times
  const mover = (moves: number) =>
    `echo "$HELIX_LAND_BASE" >> "$OUT/bases"; n=$(wc -l < "$OUT/bases"); if [ "$n" -le ${moves} ]; then printf '%s\\n' "$n" > "$ROOT/other-$n.txt"; git -C "$ROOT" add "other-$n.txt"; git -C "$ROOT" commit -q -m "other $n"; fi`

  it('three rounds lost outside the lock: the fourth check runs under it and lands, on the tip it checked', async () => {
    const {root, out, landing} = setup(mover(3))
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const r = await landing.land(ws, {})
    expect(r).toMatchObject({landed: true})
    const bases = read(out, 'bases').trim().split('\n')
    expect(bases).toHaveLength(4)
    expect(new Set(bases).size).toBe(4)
    // the last check saw the base the attempt landed on
    expect(g(root, 'rev-parse', 'main^')).toBe(bases[3])
    expect(subjects(root).slice(0, 5)).toEqual(['edit a.ts', 'other 3', 'other 2', 'other 1', 'initial'])
  })

  it('a base that moves even under the lock (not a helix slot): not landed in words, nothing unchecked on the base', async () => {
    const {root, out, landing} = setup(mover(99))
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const r = await landing.land(ws, {})
    expect(r).toMatchObject({landed: false, reason: 'main moved under the land lock during the land check: something outside helix commits to it; land when it stops', preservedRef: 'refs/helix/preserved/hx-1/1'})
    expect(read(out, 'bases').trim().split('\n')).toHaveLength(4)
    expect(subjects(root)).not.toContain('edit a.ts')
  })
})
