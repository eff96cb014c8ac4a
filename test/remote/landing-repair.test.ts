// SPEC 20.4 and 20.1 on the `--remote` landing port, against a real bare remote and
// real git (no CLI): a conflict with a base that moved is left for the agent (the
// rebase stopped, the attempt's tracker copy back in place, the claim still held),
// verified after a scripted resolve and landed; and a push refused the same race-like
// way while the base stands still ends the landing instead of spinning.
import {execFileSync, spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createGitLanding} from '../../src/landing/local.js'
import {createFleet} from '../../src/remote/fleet.js'
import {createRemoteLanding} from '../../src/landing/remote.js'
import {sandboxLanding} from '../../src/landing/sandbox.js'
import {createSandboxAttempts} from '../../src/landing/sandbox-attempts.js'
import {DEFAULT_SANDBOX} from '../../src/proc/sandbox.js'
import {projectPaths} from '../../src/util/root.js'
import type {Workspace} from '../../src/loop/ports.js'
import {closeBead} from '../../src/tracker/ops.js'
import {GIT_POLL_MS, waitFor} from '../support/wait.js'
import {bead, g, gitTestEnv, makeFleet, refuseEveryLanding, remoteRefs} from './helpers.js'

function host(root: string, name: string, stuckRaceRounds?: number, leaseSec = 30) {
  const scratch = path.join(root, '.git', 'helix-remote')
  const fleet = createFleet({root, remote: 'origin', base: 'main', trackerRel: '.ddx/beads.jsonl', scratch, env: gitTestEnv, host: name, runId: `${name}-run`, pid: process.pid, leaseSec, maxOfflineSec: 3600, now: () => new Date(), log: () => {}, pidAlive: () => true, onMaxOffline: () => {}})
  const local = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: gitTestEnv, now: () => new Date()})
  const landing = createRemoteLanding({root, top: root, prefix: '', remote: 'origin', base: 'main', trackerRel: '.ddx/beads.jsonl', scratch, host: name, pid: process.pid, fleet, local, now: () => new Date(), log: () => {}, ...(stuckRaceRounds ? {stuckRaceRounds} : {})})
  return {fleet, landing}
}

const sh = (cwd: string, script: string) => execFileSync('sh', ['-c', script], {cwd, env: {...gitTestEnv, GIT_EDITOR: 'true'}, encoding: 'utf8'})
const tipBeads = (bare: string) =>
  g(bare, 'show', 'main:.ddx/beads.jsonl')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)

/** the agent: `shared.txt` = its bead id, committed; the bead closed in the worktree's tracker (fenced) */
async function agentWork(ws: Workspace, token: string): Promise<void> {
  sh(ws.dir, `echo ${ws.bead} > shared.txt && git add -A && git -c user.name=a -c user.email=a@x commit -q -m "work on ${ws.bead}"`)
  const dir = ws.trackerDir as string
  await closeBead({root: ws.dir, dir, file: path.join(dir, 'beads.jsonl'), lockDir: path.join(dir, 'beads.lock'), pidFile: '', runState: '', logDir: '', contextFile: ''}, ws.bead, {claimToken: token, targetId: ws.bead})
}

/** a claimed, prepared and finished attempt on `id` */
async function finished(h: Pick<ReturnType<typeof host>, 'fleet' | 'landing'>, id: string): Promise<Workspace> {
  const c = await h.fleet.tracker.claim(id)
  if (!c.ok) throw new Error(c.message)
  const ws = await h.landing.prepare(id, 1, 1)
  await agentWork(ws, c.token)
  return ws
}

/** another host's hand push that moves the base and changes the same line */
function movesBase(f: ReturnType<typeof makeFleet>, name: string, filed?: string): void {
  const other = f.clone(name)
  // `filed`: the other host also files a bead, so the tracker differs between the attempt's base and the tip
  if (filed) writeFileSync(path.join(other, '.ddx', 'beads.jsonl'), `${readFileSync(path.join(other, '.ddx', 'beads.jsonl'), 'utf8')}${JSON.stringify(bead(filed))}\n`)
  sh(other, `echo other-${name} > shared.txt && git add -A && git commit -q -m other && git push -q origin main`)
}

const statusIn = (text: string, id: string) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((b) => b.id === id)?.status

describe('remote landing: repair (SPEC 20.4)', () => {
  it('a conflict with a moved base is left for the resolve; verified and landed once, the close carried by the attempt tracker copy', async () => {
    const f = makeFleet([bead('hx-1')], {'shared.txt': 'start\n'})
    // a short lease with renewals running: the claim must stay ours while the agent resolves
    const h = host(f.clone('a'), 'a', undefined, 3)
    const {fleet, landing} = h
    fleet.start()
    const ws = await finished(h, 'hx-1')
    movesBase(f, 'b')
    const tip = g(f.bare, 'rev-parse', 'main')
    const r = await landing.land(ws, {repair: true})
    expect(r).toMatchObject({landed: false, preservedRef: null, reason: 'conflict in shared.txt', repair: {kind: 'conflict', onto: tip, paths: ['shared.txt']}})
    if (r.landed || !r.repair) throw new Error('expected a repair')
    // the rebase is stopped in place, the claim still ours, the attempt's copy holds the close
    expect(g(ws.dir, 'status', '--porcelain')).toBe('UU shared.txt')
    expect(remoteRefs(f.bare)).toEqual(['refs/helix/claims/hx-1'])
    expect(statusIn(readFileSync(path.join(ws.trackerDir as string, 'beads.jsonl'), 'utf8'), 'hx-1')).toBe('closed')
    expect((await fleet.tracker.read()).byId.get('hx-1')?.status).toBe('closed')
    const claimed = g(f.bare, 'rev-parse', 'refs/helix/claims/hx-1')
    await waitFor(() => g(f.bare, 'rev-parse', 'refs/helix/claims/hx-1') !== claimed, {timeoutMs: 60_000, intervalMs: GIT_POLL_MS, what: 'the claim renewed during the resolve'})
    expect(await landing.commitsOf?.(ws, tip)).toEqual([expect.stringMatching(/^[0-9a-f]+ work on hx-1$/)])
    // a resolve that leaves the rebase half done is not done
    expect(await landing.verifyRepair?.(ws, r.repair)).toMatch(/rebase, merge or cherry-pick is still in progress/)
    // the agent: both sides kept, the rebase finished
    sh(ws.dir, 'printf "other-b\\nhx-1\\n" > shared.txt && git add shared.txt && git -c user.name=a -c user.email=a@x rebase --continue')
    expect(await landing.verifyRepair?.(ws, r.repair)).toBeNull()
    const again = await landing.land(ws, {repair: true})
    expect(again).toMatchObject({landed: true})
    expect(g(f.bare, 'show', 'main:shared.txt').split('\n')).toEqual(['other-b', 'hx-1'])
    expect(tipBeads(f.bare).map((b) => [b.id, b.status])).toEqual([['hx-1', 'closed']])
    expect(g(f.bare, 'log', '--format=%s', 'main').split('\n').filter((s) => s === 'work on hx-1')).toHaveLength(1)
    expect(remoteRefs(f.bare)).toEqual([])
    await fleet.close()
  }, 180_000)

  it('a resolve that changes the tracker copy fails verification and the copy is put back; without repair a conflict is not landed and preserved', async () => {
    const f = makeFleet([bead('hx-1'), bead('hx-2')], {'shared.txt': 'start\n'})
    const h = host(f.clone('a'), 'a')
    const {fleet, landing} = h
    const ws = await finished(h, 'hx-1')
    movesBase(f, 'b', 'hx-8')
    const r = await landing.land(ws, {repair: true})
    if (r.landed || !r.repair) throw new Error(`expected a repair: ${JSON.stringify(r)}`)
    const file = path.join(ws.trackerDir as string, 'beads.jsonl')
    const copy = readFileSync(file, 'utf8')
    sh(ws.dir, 'printf "other-b\\nhx-1\\n" > shared.txt && git add shared.txt && git -c user.name=a -c user.email=a@x rebase --continue')
    writeFileSync(file, copy.replace('"status":"open"', '"status":"closed"'))
    expect(await landing.verifyRepair?.(ws, r.repair)).toBe("the resolve changed the attempt's tracker copy (put back as it was)")
    expect(readFileSync(file, 'utf8')).toBe(copy)
    // rounds spent: preserved with the work, pushed; the claim released; the bead reopened with a note
    const ref = await landing.preserve(ws, 'not resolved: test')
    expect(ref).toBe('refs/helix/preserved/hx-1/1')
    expect(remoteRefs(f.bare)).toEqual(['refs/helix/preserved/hx-1/1'])
    expect(String(tipBeads(f.bare)[0]?.notes)).toMatch(/NOT LANDED \[[^\]]+\]: not resolved: test; work kept at refs\/helix\/preserved\/hx-1\/1/)

    // --resolve-attempts 0: today's behaviour, the rebase aborted, preserved
    const ws2 = await finished(h, 'hx-2')
    movesBase(f, 'c')
    const r2 = await landing.land(ws2, {repair: false})
    expect(r2).toMatchObject({landed: false, reason: 'conflict in shared.txt', preservedRef: 'refs/helix/preserved/hx-2/1'})
    expect(g(f.bare, 'log', '--format=%s', '-1', 'refs/helix/preserved/hx-2/1')).toBe('work on hx-2')
    await fleet.close()
  }, 180_000)
})

describe('remote landing: a refusal that only looks like a race (SPEC 20.1)', () => {
  it('the same "failed to lock" from a hook while the base stands still ends the landing after the bound, quoting git; the work is pushed to a preserved ref', async () => {
    const f = makeFleet([bead('hx-1')])
    // the remote refuses every landing (main with a claim deletion) in a lock's words; bookkeeping goes through
    refuseEveryLanding(f.bare, 'error: failed to lock refs/heads/main')
    const h = host(f.clone('a'), 'a', 3)
    const {fleet, landing} = h
    const ws = await finished(h, 'hx-1')
    const before = g(f.bare, 'rev-parse', 'main')
    const r = await landing.land(ws, {repair: true})
    expect(r).toMatchObject({landed: false, preservedRef: 'refs/helix/preserved/hx-1/1'})
    expect(r.landed ? '' : r.reason).toMatch(/^the push to origin was refused 3 times in a row the same way while main there did not move \(git: .*failed to lock refs\/heads\/main\)$/)
    // nothing of the attempt reached the base; its work is on the remote; the claim is gone
    expect(g(f.bare, 'log', '--format=%s', 'main').split('\n')).not.toContain('work on hx-1')
    expect(g(f.bare, 'log', '--format=%s', '-1', 'refs/helix/preserved/hx-1/1')).toBe('work on hx-1')
    expect(remoteRefs(f.bare)).toEqual(['refs/helix/preserved/hx-1/1'])
    expect(g(f.bare, 'rev-list', '--count', `${before}..main`)).toBe('1')
    await fleet.close()
  }, 180_000)
})

const hasBwrap = spawnSync('bwrap', ['--ro-bind', '/', '/', 'true']).status === 0

describe.skipIf(!hasBwrap)('remote landing under --sandbox: repair (SPEC 20.4 with 21.1)', () => {
  it("a conflict goes to the agent's clone although the worktree holds the attempt's tracker copy; resolved there, it lands", async () => {
    const f = makeFleet([bead('hx-1')], {'shared.txt': 'start\n'})
    const root = f.clone('a')
    const h = host(root, 'a')
    const paths = projectPaths(root, gitTestEnv)
    const attempts = createSandboxAttempts(DEFAULT_SANDBOX, paths, gitTestEnv)
    const landing = sandboxLanding(h.landing, {root, trackerFile: paths.file, spec: DEFAULT_SANDBOX, env: gitTestEnv, attempts, readable: attempts.readable(), timeoutSec: 60})
    const ws = await finished({fleet: h.fleet, landing}, 'hx-1')
    // what the sandbox wiring does after each call: the close in the clone's tracker copy taken back (fenced)
    const at = attempts.at(ws.dir)
    if (at) await attempts.takeBack(at)
    movesBase(f, 'b', 'hx-9')
    const r = await landing.land(ws, {repair: true})
    if (r.landed || !r.repair) throw new Error(`expected a repair: ${JSON.stringify(r)}`)
    expect(r.repair).toMatchObject({kind: 'conflict', paths: ['shared.txt']})
    // the conflict is in the clone; helix's worktree is back on the work (its rebase aborted over the tracker copy)
    const wt = path.join(root, '.helix', 'worktrees', 'hx-1-1')
    expect(g(wt, 'status', '--porcelain')).toBe('')
    expect(readFileSync(path.join(ws.dir, 'shared.txt'), 'utf8')).toMatch(/^<<<<<<< /m)
    sh(ws.dir, 'printf "other-b\\nhx-1\\n" > shared.txt && git add shared.txt && git -c user.name=a -c user.email=a@x rebase --continue')
    expect(await landing.verifyRepair?.(ws, r.repair)).toBeNull()
    expect(await landing.land(ws, {repair: true})).toMatchObject({landed: true})
    expect(g(f.bare, 'show', 'main:shared.txt').split('\n')).toEqual(['other-b', 'hx-1'])
    expect(tipBeads(f.bare).map((b) => [b.id, b.status])).toEqual([
      ['hx-1', 'closed'],
      ['hx-9', 'open'],
    ])
    await h.fleet.close()
  }, 180_000)
})
