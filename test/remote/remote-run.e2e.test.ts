// `helix run --remote` through the built CLI (npm run build first): two hosts, one queue.
// Bad input is refused in-process (run-refusals.test.ts); `status --remote` here too. A host cut
// off its remote while it lands: partitions.stress.test.ts.
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'
import {bead, g, makeFleet, remoteRefs} from './helpers.js'
import {events, fleetProblems, startHost} from './fleet-harness.js'

describe('helix run --remote (built CLI)', () => {
  // one scenario for two paths that were two runs: the fleet's drain (SPEC 19) and the land
  // check on every --remote candidate (SPEC 20.3), with every agent at a barrier so that the
  // hosts land at about the same moment
  it('two hosts with two workers each drain one queue with a land check: every bead closed and landed once, checked, no claim left, no red base', async () => {
    const ids = ['hx-1', 'hx-2', 'hx-3', 'hx-4']
    const f = makeFleet(ids.map((id) => bead(id)))
    const log = path.join(f.dir, 'agents.jsonl')
    // a check with a verdict on the tree: every work file is a finished one (the agent writes "done by")
    const check = 'for w in work/*.txt; do [ -e "$w" ] || continue; grep -q "^done by" "$w" || { echo "unfinished $w"; exit 1; }; done; echo checked'
    const dirs = ['host-a', 'host-b'].map((h) => f.clone(h))
    const barrier = path.join(f.dir, 'barrier')
    const hosts = ['host-a', 'host-b'].map((h, i) =>
      startHost(dirs[i] as string, h, log, ['--workers', '2', '--lease', '10', '--land-check', check], {FLEET_SLEEP_MS: '300', FLEET_BARRIER_DIR: barrier, FLEET_BARRIER_N: '4', FLEET_BARRIER_MS: '15000'}),
    )
    const codes = await Promise.all(hosts.map((h) => h.done))
    const out = hosts.map((h) => h.out()).join('\n----\n')
    expect(codes, out).toEqual([0, 0])
    expect(fleetProblems(f.bare, ids, log, 10_000)).toEqual([])
    // every bead was worked by some host, none twice to completion
    expect(new Set(events(log).filter((e) => e.event === 'end').map((e) => e.bead))).toEqual(new Set(ids))
    // every landing was checked, none red
    expect(out.match(/land check passed/g)?.length ?? 0).toBeGreaterThanOrEqual(ids.length)
    expect(out).not.toMatch(/land check FAILED/)
    expect(remoteRefs(f.bare).filter((r) => !r.startsWith('refs/helix/preserved/') && !r.startsWith('refs/helix/runs/'))).toEqual([])
    // the run history record names the host (SPEC 19.5)
    const runs = readFileSync(path.join(dirs[0] as string, '.helix-logs', 'runs.jsonl'), 'utf8').trim().split('\n')
    expect(JSON.parse(runs.at(-1) as string)).toMatchObject({host: 'host-a', remote: 'origin'})
    // the fleet as status --remote shows it: no claim left, all closed, both hosts active
    const st = await helixInProcess(dirs[0] as string, ['status', '--remote', 'origin', '--json'], GIT_ISOLATION)
    expect(st.code, st.stderr).toBe(0)
    const view = JSON.parse(st.stdout) as {counts: {closed: number}; claims: unknown[]; hosts: string[]}
    expect(view).toMatchObject({counts: {closed: ids.length}, claims: [], hosts: ['host-a', 'host-b']})
    // no red base: the check passes on every commit the base ever pointed through
    const walk = f.clone('walk')
    for (const sha of g(walk, 'rev-list', 'origin/main').split('\n')) {
      g(walk, 'checkout', '-q', '--detach', sha)
      expect(spawnSync('sh', ['-c', check], {cwd: walk, encoding: 'utf8'}).status, sha).toBe(0)
    }
  }, 240_000)
})
