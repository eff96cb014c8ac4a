// refs/helix/runs/<host> (SPEC 22.2): the merge of record lines, the compare-and-set
// push against a real bare remote, and what a failure looks like (never a throw).
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {mergeRecordText, pushRunRecords, readRunRecords, recordLines, runsRefName} from '../../src/remote/run-records.js'
import {shareRunRecords} from '../../src/app/run-records-share.js'
import {fleetHistory, parseLandings} from '../../src/report/fleet.js'
import {bead, g, gitTestEnv, makeFleet, remoteRefs} from './helpers.js'

const rec = (host: string | null, started: string, extra: Record<string, unknown> = {}) => JSON.stringify({v: 1, started_at: started, ended_at: started, ...(host ? {host} : {}), cycles: [], ...extra})

describe('run record lines', () => {
  it("keeps a host's valid lines only, keyed by host and start", () => {
    const text = [rec('a', '2026-11-27T01:00:00Z'), '{"half', rec('b', '2026-11-27T01:05:00Z'), rec(null, '2026-11-27T01:10:00Z'), '[1]', ''].join('\n')
    expect(recordLines(text, 'a').map((l) => l.text)).toEqual([rec('a', '2026-11-27T01:00:00Z')])
    expect(recordLines(text)).toHaveLength(3)
  })

  it('adds only missing lines, in start order; the line already on the remote wins; nothing missing is null', () => {
    const remote = [rec('a', '2026-11-27T02:00:00Z', {note: 'remote copy'})].join('\n') + '\n'
    const local = recordLines([rec('a', '2026-11-27T03:00:00Z'), rec('a', '2026-11-27T02:00:00Z', {note: 'local copy'}), rec('a', '2026-11-27T01:00:00Z'), rec('a', '2026-11-27T01:00:00Z')].join('\n'), 'a')
    const merged = mergeRecordText(remote, local)
    expect(merged?.trim().split('\n')).toEqual([rec('a', '2026-11-27T01:00:00Z'), rec('a', '2026-11-27T02:00:00Z', {note: 'remote copy'}), rec('a', '2026-11-27T03:00:00Z')])
    expect(mergeRecordText(merged ?? '', local)).toBeNull()
  })

  it('a host name that cannot name a ref has none', () => {
    expect(runsRefName('host-a.lan')).toBe('refs/helix/runs/host-a.lan')
    expect(runsRefName('a b')).toBeNull()
    expect(runsRefName('../x')).toBeNull()
  })

  it("the fleet's history gives a record without a host its ref's host and counts a run once", () => {
    const {history, hosts} = fleetHistory([
      {host: 'a', ref: 'refs/helix/runs/a', sha: '1', text: [rec(null, '2026-11-27T01:00:00Z'), rec('a', '2026-11-27T02:00:00Z')].join('\n')},
      {host: 'a2', ref: 'refs/helix/runs/a2', sha: '2', text: rec('a', '2026-11-27T02:00:00Z')},
    ])
    expect(history.runs.map((r) => r.host)).toEqual(['a', 'a'])
    expect(hosts).toEqual([
      {host: 'a', runs: 2},
      {host: 'a2', runs: 0},
    ])
  })

  it('landing commits name the host of each bead, the newest landing first', () => {
    const log = ['c3\t1800000300\thelix(host-b): tracker of hx-1 (attempt 2)', 'c2\t1800000200\thelix(host-a): close hx-2', 'c1\t1800000100\thelix(host-a): tracker of hx-1 (attempt 1)', 'c0\t1800000000\tseed'].join('\n')
    const m = parseLandings(log)
    expect([...m.keys()]).toEqual(['hx-1', 'hx-2'])
    expect(m.get('hx-1')).toEqual({host: 'host-b', sha: 'c3', at: new Date(1800000300 * 1000).toISOString()})
    expect(m.get('hx-2')?.host).toBe('host-a')
  })
})

describe('pushing run records to a bare remote', () => {
  it('creates the ref, then fast-forwards it with the lines it lacks; two hosts have one ref each', async () => {
    const f = makeFleet([bead('hx-1')])
    const a = f.clone('a')
    const b = f.clone('b')
    const opts = (cwd: string, host: string, localText: string) => ({cwd, remote: 'origin', env: gitTestEnv, scratch: path.join(cwd, '.git', 'helix-remote'), host, localText})
    const one = rec('a', '2026-11-27T01:00:00Z')
    expect(await pushRunRecords(opts(a, 'a', one + '\n' + rec(null, '2026-11-27T00:00:00Z')))).toEqual({ok: true, pushed: 1})
    const first = g(f.bare, 'rev-parse', 'refs/helix/runs/a')
    // nothing new: no push
    expect(await pushRunRecords(opts(a, 'a', one))).toEqual({ok: true, pushed: 0})
    expect(g(f.bare, 'rev-parse', 'refs/helix/runs/a')).toBe(first)
    const two = rec('a', '2026-11-27T02:00:00Z')
    expect(await pushRunRecords(opts(a, 'a', `${one}\n${two}\n`))).toEqual({ok: true, pushed: 1})
    expect(g(f.bare, 'rev-parse', 'refs/helix/runs/a^')).toBe(first)
    expect(g(f.bare, 'show', 'refs/helix/runs/a:runs.jsonl')).toBe(`${one}\n${two}`)
    expect(await pushRunRecords(opts(b, 'b', rec('b', '2026-11-27T01:30:00Z')))).toEqual({ok: true, pushed: 1})
    expect(remoteRefs(f.bare, 'refs/helix/runs/').sort()).toEqual(['refs/helix/runs/a', 'refs/helix/runs/b'])
    // scratch files are gone
    expect(g(a, 'status', '--porcelain')).toBe('')
    const all = await readRunRecords({cwd: b, remote: 'origin', env: gitTestEnv, scratch: ''})
    expect(all?.map((h) => [h.host, recordLines(h.text).length])).toEqual([
      ['a', 2],
      ['b', 1],
    ])
  })

  it('two runs of one host pushing at once: both records end up on the ref', async () => {
    const f = makeFleet([bead('hx-1')])
    const a1 = f.clone('a1')
    const a2 = f.clone('a2')
    const x = rec('a', '2026-11-27T01:00:00Z')
    const y = rec('a', '2026-11-27T01:00:01Z')
    const push = (cwd: string, localText: string) => pushRunRecords({cwd, remote: 'origin', env: gitTestEnv, scratch: path.join(cwd, '.git', 'helix-remote'), host: 'a', localText})
    const [p, q] = await Promise.all([push(a1, x), push(a2, y)])
    expect(p.ok && q.ok, JSON.stringify([p, q])).toBe(true)
    expect(g(f.bare, 'show', 'refs/helix/runs/a:runs.jsonl').split('\n').sort()).toEqual([x, y].sort())
  })

  it('an unreachable remote or an unreadable history is one line, never a throw; the next push sends it', async () => {
    const f = makeFleet([bead('hx-1')])
    const a = f.clone('a')
    const logDir = path.join(a, '.helix-logs')
    const lines: string[] = []
    const share = () => shareRunRecords({root: a, remote: 'origin', env: gitTestEnv, host: 'a', scratch: path.join(a, '.git', 'helix-remote'), logDir, log: (l) => lines.push(l)})
    expect(await share()).toBe(false)
    expect(lines).toEqual([expect.stringMatching(/^helix: run records not pushed to origin: cannot read .*runs\.jsonl \(ENOENT\); the next run pushes them$/)])
    mkdirSync(logDir)
    writeFileSync(path.join(logDir, 'runs.jsonl'), rec('a', '2026-11-27T01:00:00Z') + '\n')
    g(a, 'remote', 'set-url', 'origin', path.join(f.dir, 'gone.git'))
    lines.length = 0
    expect(await share()).toBe(false)
    expect(lines).toEqual(['helix: run records not pushed to origin: origin did not answer; the next run pushes them'])
    expect(remoteRefs(f.bare, 'refs/helix/runs/')).toEqual([])
    g(a, 'remote', 'set-url', 'origin', f.bare)
    lines.length = 0
    expect(await share()).toBe(true)
    expect(lines).toEqual([])
    expect(remoteRefs(f.bare, 'refs/helix/runs/')).toEqual(['refs/helix/runs/a'])
  })
})
