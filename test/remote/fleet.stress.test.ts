// SPEC 19.6: three clones of one bare remote as hosts, each `helix run --remote origin
// --workers 2 --lease 10` (5 in npm test's smoke) with a command agent. One host is kill -9'd and restarted;
// another loses the remote (its URL goes through a symlink the test removes) for
// longer than its lease, then gets it back. Afterwards every bead is closed exactly
// once at the remote tip, each bead's work is on the base exactly once, no two hosts'
// agents worked one bead at once, and no claim ref is left.
import {symlinkSync, rmSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL, trials} from '../support/stress.js'
import {bead, makeFleet, remoteRefs} from './helpers.js'
import {cloneBehindLink, events, fleetProblems, startHost, tipBeads, until, type HostRun} from './fleet-harness.js'

// the smoke's lease is shorter (5 s, renewed every 1.7 s), so the partition that outlasts it, and
// with it the test, stays under 15 s on a quiet machine; the full run keeps 10 s
const LEASE_S = STRESS_FULL ? 10 : 5
const LEASE = ['--workers', '2', '--lease', String(LEASE_S)]
// host-p's agents outlast the lease by 4 s: their claims live only by renewal
const OUTLAST_MS = String((LEASE_S + 4) * 1000)

function killAgents(log: string): void {
  for (const e of events(log)) {
    try {
      process.kill(-e.pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

describe('a fleet of three hosts on one bare remote', () => {
  it(
    'survives a kill -9 and a partition longer than the lease: every bead closed and landed once, no double work, no claim left',
    async () => {
      const n = trials(18, 6)
      const ids = Array.from({length: n}, (_, i) => `hx-${String(i + 1).padStart(2, '0')}`)
      const f = makeFleet(ids.map((id) => bead(id)))
      const log = path.join(f.dir, 'agents.jsonl')
      const started = (host: string) => events(log).some((e) => e.host === host && e.event === 'start')
      try {
        // The hosts start one after another, each once the one before has work, so that on
        // a loaded machine host-p and host-k still get beads to lose (started together, the
        // others once drained the smoke's 6 beads before host-p had started).
        // host-p's agents outlast the lease: their claims live only by renewal. Cut it off
        // while its first agent works, for longer than its lease.
        const p = cloneBehindLink(f, 'host-p')
        const ph = startHost(p.dir, 'host-p', log, LEASE, {FLEET_SLEEP_MS: OUTLAST_MS})
        await until(() => started('host-p') || ph.child.exitCode !== null, 120_000, 'host-p to dispatch')
        rmSync(p.link)

        // kill -9 host-k's helix as soon as one of its agents works, then start it again
        const kDir = f.clone('host-k')
        let k: HostRun = startHost(kDir, 'host-k', log, LEASE, {FLEET_SLEEP_MS: '400'})
        await until(() => started('host-k') || k.child.exitCode !== null, 120_000, 'host-k to dispatch')
        let killed = false
        if (k.child.exitCode === null) {
          killed = true
          process.kill(k.child.pid as number, 'SIGKILL')
          await k.done
          k = startHost(kDir, 'host-k', log, LEASE, {FLEET_SLEEP_MS: '400'})
        }
        const a = startHost(f.clone('host-a'), 'host-a', log, LEASE, {FLEET_SLEEP_MS: '400'})

        await until(() => /lost the claim on/.test(ph.out()) || ph.child.exitCode !== null, 120_000, 'host-p to stop its attempt after its lease ran out')
        symlinkSync(f.bare, p.link)

        const codes = await Promise.all([a.done, k.done, ph.done])
        const outs = [a, k, ph].map((h) => h.out()).join('\n-----\n')
        expect(killed).toBe(true)
        expect(codes, outs).toEqual([0, 0, 0])
        expect(ph.out()).toMatch(/lost the claim on hx-\d+ \(its lease expired unrenewed\)/)
        expect(fleetProblems(f.bare, ids, log, LEASE_S * 1000), outs).toEqual([])
        expect(tipBeads(f.bare)).toHaveLength(n)
        // what is left on the remote is preserved work only
        // besides preserved work, only the hosts' run records (SPEC 22.2)
        expect(remoteRefs(f.bare).filter((r) => !r.startsWith('refs/helix/preserved/') && !r.startsWith('refs/helix/runs/'))).toEqual([])
      } finally {
        killAgents(log)
      }
    },
    600_000,
  )
})
