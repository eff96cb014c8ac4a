/**
 * Dead-run cleanup (SPEC 14.5): processes still carrying a dispatch id of a
 * helix run that is gone are ended before that run's claims are reclaimed;
 * processes of live runs, and untagged ones, are never touched.
 */
import {spawn} from 'node:child_process'
import {existsSync, readFileSync, realpathSync} from 'node:fs'
import os from 'node:os'
import {describe, expect, it} from 'vitest'
import {deadRunProcesses, killDeadRunProcesses, recoverOrphans, runAlive} from '../../src/recovery/orphans.js'
import {currentStartToken, startTokenOf} from '../../src/proc/process-probe.js'
import {readTracker} from '../../src/tracker/store.js'
import {pidAlive} from '../../src/proc/process.js'
import {fakeProbe, tempProject} from '../tracker/helpers.js'
import {trackProcess} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'


/**
 * A stand-in helix run: alive until `end()` (kill -9). Leftovers are created
 * while it lives, so a real helix started meanwhile by another test leaves
 * them alone, and it dies just before the code under test looks.
 */
function run(): {pid: number; start: string; end: () => Promise<void>} {
  const child = spawn('sleep', ['300'], {stdio: 'ignore'})
  const pid = child.pid!
  trackProcess(pid)
  const gone = new Promise<void>((r) => child.once('exit', () => r()))
  return {
    pid,
    start: startTokenOf(pid)!,
    async end() {
      child.kill('SIGKILL')
      await gone
    },
  }
}

/** A setsid'd leftover (own session, re-parentable) carrying a dispatch tag; `stubborn` ignores SIGTERM. */
function leftover(tag: Record<string, string>, stubborn = false): number {
  const script = stubborn ? "trap '' TERM; while :; do sleep 0.1; done" : 'exec sleep 300'
  const child = spawn('sh', ['-c', script], {stdio: 'ignore', detached: true, env: {PATH: process.env.PATH, ...tag}})
  child.unref()
  trackProcess(child.pid!)
  return child.pid!
}

describe('dead-run cleanup', () => {
  it('runAlive: this process with its start token is alive; a wrong start token or a dead pid is not', async () => {
    expect(runAlive(process.pid, currentStartToken()!)).toBe(true)
    expect(runAlive(process.pid, null)).toBe(true)
    expect(runAlive(process.pid, '1')).toBe(false) // the pid was reused: another run
    const r = run()
    expect(runAlive(r.pid, r.start)).toBe(true)
    await r.end()
    expect(runAlive(r.pid, r.start)).toBe(false)
  })

  it('ends the tagged processes of dead runs of this project (SIGKILL after the grace for a SIGTERM-ignorer), leaves live runs, other projects and untagged ones alone', async () => {
    const project = realpathSync(tempProject('').paths.root)
    const P = {HELIX_PROJECT: project}
    const dead = run()
    const orphan = leftover({HELIX_DISPATCH_ID: 'deadtok.1', HELIX_RUN_PID: String(dead.pid), HELIX_RUN_START: dead.start, ...P})
    const stubborn = leftover({HELIX_DISPATCH_ID: 'deadtok.2', HELIX_RUN_PID: String(dead.pid), HELIX_RUN_START: dead.start, ...P}, true)
    const reused = leftover({HELIX_DISPATCH_ID: 'reused.1', HELIX_RUN_PID: String(process.pid), HELIX_RUN_START: '1', ...P})
    const live = leftover({HELIX_DISPATCH_ID: 'live.1', HELIX_RUN_PID: String(process.pid), HELIX_RUN_START: currentStartToken()!, ...P})
    const noRun = leftover({HELIX_DISPATCH_ID: 'norun.1', ...P})
    const plain = leftover({})
    // SPEC 18.3a: the same dead run's processes, but of another project, or with no project recorded
    const otherProject = leftover({HELIX_DISPATCH_ID: 'deadtok.3', HELIX_RUN_PID: String(dead.pid), HELIX_RUN_START: dead.start, HELIX_PROJECT: '/elsewhere/other-project'})
    const noProject = leftover({HELIX_DISPATCH_ID: 'deadtok.4', HELIX_RUN_PID: String(dead.pid), HELIX_RUN_START: dead.start})
    await waitFor(() => deadRunProcesses(project).filter((p) => p.pid === reused).length === 1)
    await dead.end()
    expect(deadRunProcesses(project).map((p) => p.pid)).toEqual(expect.arrayContaining([orphan, stubborn, reused]))
    expect(deadRunProcesses(project).map((p) => p.pid)).not.toContain(otherProject)

    const said: string[] = []
    const dry = await killDeadRunProcesses({project, dryRun: true, say: (l) => said.push(l), graceMs: 300})
    expect(dry).toEqual([])
    expect(pidAlive(orphan)).toBe(true)
    expect(said.at(-1)).toMatch(/^helix: would kill \d+ leftover agent process\(es\) of dead run\(s\) /)

    const t0 = Date.now()
    const killed = await killDeadRunProcesses({project, say: (l) => said.push(l), graceMs: 300})
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(killed).toEqual(expect.arrayContaining([orphan, stubborn, reused]))
    for (const pid of [orphan, stubborn, reused]) expect(pidAlive(pid)).toBe(false)
    for (const pid of [live, noRun, plain, otherProject, noProject]) expect(pidAlive(pid)).toBe(true)
    expect(said.at(-1)).toMatch(new RegExp(`^helix: killed \\d+ leftover agent process\\(es\\) of dead run\\(s\\) .*${dead.pid}`))
  })

  it('recoverOrphans ends the dead run\'s processes BEFORE it reclaims the claim', async () => {
    const dead = run()
    const claimedAt = new Date(Date.now() - 8000 * 1000).toISOString()
    const bead = {id: 'hx-dead', status: 'in_progress', owner: 'helix', 'claimed-at': claimedAt, 'claimed-pid': dead.pid, 'claimed-start': dead.start, 'claimed-machine': os.hostname(), 'claim-token': 'tok9'}
    const {paths} = tempProject(JSON.stringify(bead) + '\n')
    const agentPid = leftover({HELIX_DISPATCH_ID: 'tok9.1', HELIX_RUN_PID: String(dead.pid), HELIX_RUN_START: dead.start, HELIX_PROJECT: realpathSync(paths.root)})
    const said: string[] = []
    const probe = fakeProbe({host: os.hostname()})
    const orig = probe.helixProcessNamesBead
    let aliveAtReclaimCheck: boolean | null = null
    probe.helixProcessNamesBead = async (id: string) => {
      aliveAtReclaimCheck = pidAlive(agentPid)
      return orig(id)
    }
    await waitFor(() => existsSync(`/proc/${agentPid}/environ`) && readFileSync(`/proc/${agentPid}/environ`, 'latin1').includes('HELIX_DISPATCH_ID=tok9.1'))
    await dead.end()
    const prev = process.env.HELIX_KILL_GRACE_MS
    process.env.HELIX_KILL_GRACE_MS = '300'
    try {
      const r = await recoverOrphans(paths, {owner: 'helix', probe, thresholdSec: 7200, say: (l) => said.push(l)})
      expect(r.recovered).toEqual(['hx-dead'])
    } finally {
      if (prev === undefined) delete process.env.HELIX_KILL_GRACE_MS
      else process.env.HELIX_KILL_GRACE_MS = prev
    }
    expect(aliveAtReclaimCheck).toBe(false)
    expect(pidAlive(agentPid)).toBe(false)
    const killedAt = said.findIndex((l) => l.startsWith('helix: killed '))
    const reclaimedAt = said.findIndex((l) => l.startsWith('helix: reclaiming orphaned hx-dead'))
    expect(killedAt).toBeGreaterThanOrEqual(0)
    expect(reclaimedAt).toBeGreaterThan(killedAt)
    expect((await readTracker(paths.file)).byId.get('hx-dead')!.status).toBe('open')
  })
})
