// SPEC 22.2: `helix report --remote` covers the whole fleet. Two hosts run short
// `--remote` runs with the fleet's command agent (built CLI; npm run build first);
// each pushes its run records to refs/helix/runs/<host>; a third clone, the
// operator's, sees both hosts' runs and every bead attributed to the host whose
// agent closed it (read from the agents' own log, not assumed).
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {bead, g, makeFleet, remoteRefs} from '../remote/helpers.js'
import {events, startHost} from '../remote/fleet-harness.js'
import {GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'

interface ReportJson {
  runs: number
  run_list: Array<{host?: string}>
  closed: Array<{id: string; host?: string}>
  fleet?: {remote: string; base: string; hosts: Array<{host: string; runs: number}>}
  totals: {closed: number}
}

// The hosts' runs are processes (each pushes its records as it ends); the reports that read
// them run in-process (test/support/in-process.ts): text and JSON, no node start each.
async function report(cwd: string, ...args: string[]) {
  const r = await helixInProcess(cwd, ['report', ...args], {...GIT_ISOLATION, COLUMNS: '200'})
  return {status: r.code, stdout: r.stdout, stderr: r.stderr}
}

describe('helix report --remote (built CLI)', () => {
  it("an operator's clone sees both hosts' runs, each bead attributed to the host that landed it", async () => {
    const ids = ['hx-1', 'hx-2', 'hx-3']
    const f = makeFleet(ids.map((id) => bead(id)))
    const log = path.join(f.dir, 'agents.jsonl')
    const a = f.clone('host-a')
    const b = f.clone('host-b')
    // one after the other, so that each host surely closes some: host-a one bead, host-b the rest
    const ha = startHost(a, 'host-a', log, ['--max-cycles', '1'], {FLEET_SLEEP_MS: '50'})
    expect(await ha.done, ha.out()).toBe(0)
    const hb = startHost(b, 'host-b', log, [], {FLEET_SLEEP_MS: '50'})
    expect(await hb.done, hb.out()).toBe(0)
    expect(remoteRefs(f.bare, 'refs/helix/runs/').sort()).toEqual(['refs/helix/runs/host-a', 'refs/helix/runs/host-b'])
    // who closed what, from the agents' own log
    const closer = new Map(events(log).filter((e) => e.event === 'end').map((e) => [e.bead, e.host]))
    expect(new Set(closer.keys())).toEqual(new Set(ids))
    expect(new Set(closer.values())).toEqual(new Set(['host-a', 'host-b']))

    const op = f.clone('operator')
    const r = await report(op, '--remote', 'origin', '--json')
    expect(r.status, r.stderr).toBe(0)
    const j = JSON.parse(r.stdout) as ReportJson
    expect(j.runs).toBe(2)
    expect(j.run_list.map((x) => x.host).sort()).toEqual(['host-a', 'host-b'])
    expect(j.fleet).toMatchObject({remote: 'origin', base: 'main'})
    expect(j.fleet?.hosts).toEqual([
      {host: 'host-a', runs: 1},
      {host: 'host-b', runs: 1},
    ])
    expect(j.totals.closed).toBe(ids.length)
    expect(new Map(j.closed.map((c) => [c.id, c.host]))).toEqual(closer)
    // the text form names each bead's host too
    const t = await report(op, '--remote', 'origin')
    expect(t.status, t.stderr).toBe(0)
    expect(t.stdout).toContain('helix report: 2 runs')
    expect(t.stdout).toMatch(/fleet: origin\/main at [0-9a-f]{10}, hosts host-a \(1 run\), host-b \(1 run\)/)
    for (const [id, host] of closer) expect(t.stdout).toMatch(new RegExp(`^  ${id}  task ${id}  \\[[^\\]]+\\] \\(on ${host}\\)$`, 'm'))
    // and the page: one timeline row per host and slot
    const h = await report(op, '--remote', 'origin', '--html', '-')
    expect(h.status, h.stderr).toBe(0)
    expect(h.stdout).toContain('>host-a w1</text>')
    expect(h.stdout).toContain('>host-b w1</text>')
    // the report read only: the operator's checkout and its own history are as cloned
    expect(g(op, 'status', '--porcelain')).toBe('')
    expect(g(op, 'for-each-ref', '--format=%(refname)', 'refs/helix/')).toBe('')

    // a host's own report (no --remote) is its runs only, as before
    const own = await report(a, '--json')
    expect(own.status, own.stderr).toBe(0)
    const oj = JSON.parse(own.stdout) as ReportJson
    expect(oj.runs).toBe(1)
    expect(oj.fleet).toBeUndefined()
    const mine = [...closer].filter(([, host]) => host === 'host-a').map(([id]) => id)
    expect(oj.closed.map((c) => c.id).sort()).toEqual(mine.sort())

    // a second run of host-a adds to its ref as a child commit (history kept), not a rewrite
    const before = g(f.bare, 'rev-parse', 'refs/helix/runs/host-a')
    g(f.bare, 'show', `${before}:runs.jsonl`)
    const again = startHost(a, 'host-a', log, [], {FLEET_SLEEP_MS: '50'})
    expect(await again.done, again.out()).toBe(0)
    const after = g(f.bare, 'rev-parse', 'refs/helix/runs/host-a')
    expect(after).not.toBe(before)
    expect(g(f.bare, 'rev-parse', `${after}^`)).toBe(before)
    const lines = g(f.bare, 'show', `${after}:runs.jsonl`).split('\n').filter(Boolean)
    expect(lines).toHaveLength(2)
    expect(lines.map((l) => (JSON.parse(l) as {host: string}).host)).toEqual(['host-a', 'host-a'])
    expect(readFileSync(path.join(a, '.helix-logs', 'runs.jsonl'), 'utf8').trim().split('\n')).toEqual(lines)
  }, 240_000)
})
