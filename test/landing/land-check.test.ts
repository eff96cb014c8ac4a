// SPEC 20.3–20.4 on the real landing adapter and real git: the land check runs on the
// candidate as it would land (rebased onto the tip it fast-forwards), outside the land
// lock, again when the base moved; a red check or a conflict leaves the worktree for
// the resolve action, and verifyRepair says what done still lacks.
import {existsSync, mkdirSync, readFileSync, rmSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import type {LandCheckEvent} from '../../src/loop/ports.js'
import {makeTempDir} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'
import {agentCommit, g, gitTestEnv, makeRepo, read, write} from './helpers.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

function setup(command: string, timeoutSec = 60) {
  const root = makeRepo()
  const out = makeTempDir('helix-land-check-out-')
  dirs.push(root, out)
  const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: {...gitTestEnv, OUT: out, ROOT: root}, now: () => new Date('2026-11-27T02:00:00Z'), lockWaitMs: 5000, landCheck: {command, timeoutSec, stallSec: 0, graceMs: 200}})
  const events: LandCheckEvent[] = []
  return {root, out, landing, events, onCheck: (e: LandCheckEvent) => events.push(e)}
}
const tip = (root: string) => g(root, 'rev-parse', 'refs/heads/main')
const opCommit = (root: string, file: string, text: string) => {
  write(root, file, text)
  g(root, 'add', file)
  g(root, 'commit', '-q', '-m', `operator: ${file}`)
}

describe('the land check (SPEC 20.3)', () => {
  it('runs by sh -c in the worktree on the rebased candidate, with its environment, then lands', async () => {
    const {root, out, landing, events, onCheck} = setup(`printf '%s|%s|%s|%s\\n' "$HELIX_BEAD_ID" "$HELIX_ATTEMPT" "$HELIX_LAND_BASE" "$HELIX_PROJECT" >> "$OUT/env"; grep -q moved b.ts && echo "saw the base's change"`)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    // the base moves after the attempt started: the check must see the candidate rebased onto it
    opCommit(root, 'b.ts', 'export const b = 1 // moved\n')
    const onto = tip(root)
    const r = await landing.land(ws, {onCheck, attemptNo: 3})
    expect(r.landed).toBe(true)
    expect(read(out, 'env').trim()).toBe(`hx-1|3|${onto}|${path.resolve(root)}`)
    expect(events).toEqual([expect.objectContaining({passed: true, rc: 0, onto, tail: ["saw the base's change"]})])
    expect(read(root, 'a.ts')).toBe('agent\n')
  })

  it('a red check: not landed, the base unmoved, the work preserved, its last lines returned', async () => {
    const {root, landing, events, onCheck} = setup(`for i in $(seq 1 50); do echo "line $i"; done; exit 3`)
    const before = tip(root)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'red\n')
    const r = await landing.land(ws, {onCheck})
    expect(r).toMatchObject({landed: false, reason: 'land check failed (rc=3)', preservedRef: 'refs/helix/preserved/hx-1/1'})
    expect(!r.landed && r.checkTail).toHaveLength(40)
    expect(!r.landed && r.checkTail?.at(-1)).toBe('line 50')
    expect(events[0]).toMatchObject({passed: false, rc: 3})
    expect(tip(root)).toBe(before)
    expect(existsSync(path.join(root, '.helix', 'worktrees', 'hx-1-1'))).toBe(false)
  })

  it('the base moving during the check means rebase and check again; the second check sees the new tip', async () => {
    // the first run of the check lands another commit on main, as another slot would
    const {root, out, landing, events, onCheck} = setup(`echo "$HELIX_LAND_BASE" >> "$OUT/bases"; if [ ! -e "$OUT/once" ]; then touch "$OUT/once"; printf 'other\\n' > "$ROOT/other.txt"; git -C "$ROOT" add other.txt; git -C "$ROOT" commit -q -m other; fi`)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const first = tip(root)
    const r = await landing.land(ws, {onCheck})
    expect(r.landed).toBe(true)
    const bases = read(out, 'bases').trim().split('\n')
    expect(bases).toHaveLength(2)
    expect(bases[0]).toBe(first)
    expect(bases[1]).not.toBe(first)
    expect(events.map((e) => e.passed)).toEqual([true, true])
    expect(g(root, 'log', '--format=%s', '-3', 'main').split('\n')).toEqual(['edit a.ts', 'other', 'initial'])
  })

  it('a timeout ends the check and everything it started', async () => {
    const {out, landing, events, onCheck} = setup(`sleep 300 & echo $! > "$OUT/pid"; wait`, 1)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'slow\n')
    const r = await landing.land(ws, {onCheck})
    expect(r).toMatchObject({landed: false, reason: 'land check timed out after 1s'})
    expect(events[0]).toMatchObject({passed: false, ended: 'timeout'})
    const pid = Number(read(out, 'pid').trim())
    await waitFor(() => {
      try {
        process.kill(pid, 0)
        return false
      } catch {
        return true
      }
    }, 10_000)
  })
})

describe('repair (SPEC 20.4)', () => {
  it('a red check with repair allowed leaves the worktree and writes .helix/land-check.log; a fix then lands', async () => {
    const {root, landing} = setup(`if grep -q broken a.ts; then echo "a.ts is broken"; exit 1; fi`)
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'broken\n')
    const r = await landing.land(ws, {repair: true})
    expect(r.landed).toBe(false)
    const repair = !r.landed ? r.repair : undefined
    expect(repair).toMatchObject({kind: 'check', rc: 1, onto: tip(root), tail: ['a.ts is broken'], logFile: path.join(ws.dir, '.helix', 'land-check.log')})
    expect(read(ws.dir, '.helix/land-check.log')).toBe('a.ts is broken\n')
    // the log never reaches a commit
    expect(g(ws.dir, 'status', '--porcelain')).toBe('')
    agentCommit(ws.dir, 'a.ts', 'fixed\n')
    expect(await landing.verifyRepair!(ws, repair!)).toBeNull()
    expect((await landing.land(ws, {repair: true})).landed).toBe(true)
    expect(read(root, 'a.ts')).toBe('fixed\n')
  })

  it('a conflict with repair allowed stops the rebase with markers; verifyRepair names what is left until it is done', async () => {
    const {root, landing} = setup('true')
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'line1 agent\nline2\nline3\nline4\nline5\n')
    opCommit(root, 'a.ts', 'line1 base\nline2\nline3\nline4\nline5\n')
    const r = await landing.land(ws, {repair: true})
    const repair = !r.landed ? r.repair : undefined
    expect(repair).toEqual({kind: 'conflict', onto: tip(root), paths: ['a.ts']})
    expect(read(ws.dir, 'a.ts')).toMatch(/^<<<<<<< /m)
    expect(await landing.verifyRepair!(ws, repair!)).toBe('a rebase, merge or cherry-pick is still in progress')
    // an agent that commits the markers is not done
    g(ws.dir, 'add', 'a.ts')
    g(ws.dir, '-c', 'core.editor=true', '-c', 'user.name=A', '-c', 'user.email=a@a', 'rebase', '--continue')
    expect(await landing.verifyRepair!(ws, repair!)).toBe('a.ts still holds a conflict marker')
    agentCommit(ws.dir, 'a.ts', 'line1 base agent\nline2\nline3\nline4\nline5\n', 'merge the line')
    expect(await landing.verifyRepair!(ws, repair!)).toBeNull()
    expect((await landing.land(ws, {repair: true})).landed).toBe(true)
    expect(read(root, 'a.ts').split('\n')[0]).toBe('line1 base agent')
  })

  it('verifyRepair: a detached HEAD or a HEAD that left the base tip behind is not done', async () => {
    const {root, landing} = setup('true')
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    opCommit(root, 'b.ts', 'base\n')
    const repair = {kind: 'conflict' as const, onto: tip(root), paths: ['a.ts']}
    expect(await landing.verifyRepair!(ws, repair)).toBe(`HEAD does not descend from the base tip ${tip(root).slice(0, 12)}`)
    g(ws.dir, 'switch', '-q', '--detach')
    expect(await landing.verifyRepair!(ws, repair)).toBe("HEAD is not the attempt's branch helix/hx-1-1 (detached)")
  })

  it('never follows a .helix symlink the agent made: no log written through it', async () => {
    const {landing} = setup('echo red; exit 1')
    const ws = await landing.prepare('hx-1', 1, 1)
    agentCommit(ws.dir, 'a.ts', 'agent\n')
    const elsewhere = makeTempDir('helix-land-check-elsewhere-')
    dirs.push(elsewhere)
    mkdirSync(path.join(elsewhere, 'inner'))
    rmSync(path.join(ws.dir, '.helix'), {recursive: true, force: true})
    symlinkSync(path.join(elsewhere, 'inner'), path.join(ws.dir, '.helix'))
    const r = await landing.land(ws, {repair: true})
    expect(!r.landed && r.repair).toMatchObject({kind: 'check', tail: ['red'], logFile: null})
    expect(existsSync(path.join(elsewhere, 'inner', 'land-check.log'))).toBe(false)
    expect(readFileSync(path.join(ws.dir, 'a.ts'), 'utf8')).toBe('agent\n')
  })
})
