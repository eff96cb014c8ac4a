// SPEC 20.1 (issue 26): two clones of one bare remote, each `helix run --remote origin
// --workers 3`, whose six agents commit and close, then wait at a barrier until all six
// have, so that both hosts land at the same moment; two busy loops load the CPU meanwhile.
// Before 20.1 about one trial in three printed "the remote origin is unreachable" (git's
// own ref lock between one host's workers) and redid a finished bead. Every trial: every
// bead lands at its first attempt, no "unreachable" line, no NOT LANDED, and at most one
// helix commit per bead on the base. The smoke (npm test) runs one trial of one round, with one
// busy loop from the moment the barrier is full until every bead has landed: npm test's
// other workers load the two cores already, and a loop from the start burned a core for the
// whole trial (~15 CPU-s of ~27) while the agents slept and committed. The full run 5 trials
// of two rounds beside two loops from each trial's start.
import {spawn} from 'node:child_process'
import {existsSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL, trials} from '../support/stress.js'
import {trackProcess} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'
import {bead, g, makeFleet, remoteRefs} from './helpers.js'
import {events, fleetProblems, startHost} from './fleet-harness.js'

const HOSTS = ['host-a', 'host-b']
const WORKERS = 3
/** rounds per trial: each round, every host's three workers finish together */
const ROUNDS = STRESS_FULL ? 2 : 1
const BUSY_LOOPS = STRESS_FULL ? 2 : 1

/** busy loops beside the test (tracked: the rig kills them if the test does not) */
function cpuLoad(n: number): Array<{kill: () => void}> {
  return Array.from({length: n}, () => {
    const c = trackProcess(spawn(process.execPath, ['-e', 'for(;;){}'], {stdio: 'ignore'}))
    return {kill: () => c.kill('SIGKILL')}
  })
}

describe('hosts whose agents finish together, under CPU load', () => {
  it('land every bead at its first attempt: a lost race is a race, never "unreachable"', async () => {
    const n = trials(5, 1)
    const results: string[] = []
    for (let t = 0; t < n; t++) {
      // each round, every host's three workers finish together (the barrier's groups are of six)
      const ids = Array.from({length: ROUNDS * HOSTS.length * WORKERS}, (_, i) => `hx-${t}-${String(i + 1).padStart(2, '0')}`)
      const f = makeFleet(ids.map((id) => bead(id)))
      const log = path.join(f.dir, 'agents.jsonl')
      const barrier = path.join(f.dir, 'barrier')
      const load = STRESS_FULL ? cpuLoad(BUSY_LOOPS) : []
      try {
        const env = {FLEET_SLEEP_MS: '100', FLEET_BARRIER_DIR: barrier, FLEET_BARRIER_N: String(HOSTS.length * WORKERS), FLEET_BARRIER_MS: '90000'}
        const hosts = HOSTS.map((h) => startHost(f.clone(h), h, log, ['--workers', String(WORKERS), '--lease', '30'], env))
        if (!STRESS_FULL) {
          // the smoke's load: from the moment all six agents have committed and closed, so their hosts land under it
          let ended = false
          void Promise.all(hosts.map((h) => h.done)).then(() => (ended = true))
          const full = () => existsSync(barrier) && readdirSync(barrier).length >= HOSTS.length * WORKERS
          await waitFor(() => ended || full(), {timeoutMs: 120_000, intervalMs: 50, what: 'all six agents at the barrier'})
          const smokeLoad = cpuLoad(BUSY_LOOPS)
          load.push(...smokeLoad)
          // ...and until every bead has landed: what follows (the drain's check, the exit) is not a race
          const landed = () => hosts.reduce((n, h) => n + (h.out().match(/ landed hx-/g)?.length ?? 0), 0)
          void waitFor(() => ended || landed() >= ids.length, {timeoutMs: 120_000, intervalMs: 50})
            .catch(() => {})
            .finally(() => smokeLoad.forEach((l) => l.kill()))
        }
        const codes = await Promise.all(hosts.map((h) => h.done))
        const outs = hosts.map((h) => h.out()).join('\n-----\n')
        expect(codes, outs).toEqual([0, 0])
        expect(outs).not.toMatch(/unreachable/)
        expect(outs).not.toMatch(/NOT LANDED/)
        // each bead's agent ran once: it landed at its first attempt
        const starts = events(log).filter((e) => e.event === 'start').map((e) => e.bead)
        expect(starts.sort(), outs).toEqual([...ids].sort())
        expect(fleetProblems(f.bare, ids, log, 30_000), outs).toEqual([])
        const helixCommits = g(f.bare, 'log', '--format=%s', 'main').split('\n').filter((s) => s.startsWith('helix('))
        expect(helixCommits.length, helixCommits.join('\n')).toBeLessThanOrEqual(ids.length)
        // nothing left but each host's run records (SPEC 22.2)
        expect(remoteRefs(f.bare)).toEqual(HOSTS.map((h) => `refs/helix/runs/${h}`).sort())
        results.push(`trial ${t + 1}: ok (${helixCommits.length} helix commits for ${ids.length} beads)`)
      } finally {
        for (const l of load) l.kill()
      }
    }
    expect(results).toHaveLength(n)
  }, 900_000)
})
