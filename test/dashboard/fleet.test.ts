// `helix dashboard --remote NAME` against a real bare remote: the fleet pane shows the
// remote's claim refs (host, expiry) read by `helix status --remote`'s own code, once
// for every page, and an unknown remote is refused before anything listens.
import {spawnSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'
import {trackerText} from '../support/project.js'
import {startDashboard} from '../../src/dashboard/index.js'
import type {DashboardState} from '../../src/dashboard/types.js'
import {pushRunRecords} from '../../src/remote/run-records.js'
import {gitSeq} from '../support/git.js'

const GIT_ENV = {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', LC_ALL: 'C'}
const g = (cwd: string, ...args: string[]) => {
  const r = spawnSync('git', args, {cwd, env: GIT_ENV, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}

function fleetProject() {
  const base = makeTempDir('helix-dash-fleet-')
  const remote = path.join(base, 'remote.git')
  const root = path.join(base, 'repo')
  g(base, 'init', '-q', '--bare', '-b', 'main', remote)
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 'op@example.com'], ['config', 'user.name', 'Operator'])
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), trackerText([{id: 'hx-a', title: 'claimed elsewhere'}, {id: 'hx-b', title: 'free'}]))
  gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'queue'])
  g(root, 'remote', 'add', 'origin', remote)
  g(root, 'push', '-q', 'origin', 'main')
  const empty = g(root, 'hash-object', '-t', 'tree', '-w', '/dev/null')
  const now = Date.now()
  const msg = JSON.stringify({host: 'host-b <script>', run: 'r1', pid: 7, attempt: 1, claimed_at: new Date(now - 60_000).toISOString(), expires_at: new Date(now + 240_000).toISOString()})
  g(root, 'push', '-q', 'origin', `${g(root, 'commit-tree', '-m', msg, empty)}:refs/helix/claims/hx-a`)
  return {root}
}

describe('dashboard --remote', () => {
  it("shows the remote's claims by host with their expiry, read once for every page", async () => {
    const {root} = fleetProject()
    const lines: string[] = []
    const d = await startDashboard({cwd: root, env: GIT_ENV, port: '0', remote: 'origin', print: (l) => lines.push(l)})
    try {
      expect(lines).toEqual([`helix: dashboard at http://127.0.0.1:${d.port}/`])
      let last: DashboardState | null = null
      const offs = Array.from({length: 5}, () => d.hub.subscribe({send: (t) => void (t && (last = JSON.parse(t) as DashboardState))}))
      await waitFor(() => last?.projects[0].fleet?.view, {timeoutMs: 20_000, what: 'the first fleet read'})
      const fleet = last!.projects[0].fleet!
      expect(fleet.error).toBeNull()
      expect(fleet.view!.claims).toHaveLength(1)
      expect(fleet.view!.claims[0]).toMatchObject({bead: 'hx-a', title: 'claimed elsewhere', host: 'host-b <script>', state: 'live'})
      expect(fleet.view!.claims[0].expires_in_s).toBeGreaterThan(200)
      expect(fleet.pull_requests).toEqual([])
      // five pages, one read
      expect(d.hub.counters.fleetReads).toBe(1)
      offs.forEach((off) => off())
    } finally {
      await d.close()
    }
  })

  it("the night is the fleet's: every host's pushed run records, each closed bead with its host; a moved ref is followed", async () => {
    const {root} = fleetProject()
    const t = Date.now() - 3_600_000
    const at = (ms: number) => new Date(t + ms).toISOString()
    const record = (host: string, bead: string, start: number) =>
      JSON.stringify({v: 1, host, remote: 'origin', started_at: at(start), ended_at: at(start + 60_000), agent: 'a', workers: 1, attempted: 1, completed: 1, cycles: [{n: 1, slot: 1, bead, title: `t ${bead}`, outcome: 'COMPLETE', started_at: at(start), ended_at: at(start + 50_000), duration_ms: 50_000, commits: ['c']}]})
    const push = (host: string, text: string) => pushRunRecords({cwd: root, remote: 'origin', env: GIT_ENV, scratch: path.join(root, '.git', 'helix-remote'), host, localText: text})
    expect(await push('host-a', record('host-a', 'hx-a', 0))).toMatchObject({ok: true})
    expect(await push('host-b', record('host-b', 'hx-b', 10_000))).toMatchObject({ok: true})
    const d = await startDashboard({cwd: root, env: GIT_ENV, port: '0', remote: 'origin', print: () => {}})
    try {
      let last: DashboardState | null = null
      const off = d.hub.subscribe({send: (text) => void (text && (last = JSON.parse(text) as DashboardState))})
      await waitFor(() => last?.projects[0].night.runs === 2, {timeoutMs: 20_000, what: "both hosts' runs on the page"})
      expect(last!.projects[0].night).toMatchObject({runs: 2, cycles: 2, closed: 2})
      expect(d.hub.report(0)?.closed.map((c) => [c.id, c.host])).toEqual([
        ['hx-a', 'host-a'],
        ['hx-b', 'host-b'],
      ])
      // host-b's next run lands in its ref: the next fleet read brings it
      expect(await push('host-b', [record('host-b', 'hx-b', 10_000), record('host-b', 'hx-c', 120_000)].join('\n'))).toMatchObject({ok: true, pushed: 1})
      await d.hub.readFleet()
      await waitFor(() => last?.projects[0].night.runs === 3, {timeoutMs: 20_000, what: "host-b's second run on the page"})
      // the page only read: no ref written in the project's clone
      expect(g(root, 'for-each-ref', 'refs/helix/')).toBe('')
      off()
    } finally {
      await d.close()
    }
  })

  it('refuses an unknown remote in one line before listening', async () => {
    const {root} = fleetProject()
    const lines: string[] = []
    await expect(startDashboard({cwd: root, env: GIT_ENV, port: '0', remote: 'upstream', print: (l) => lines.push(l)})).rejects.toThrow(/^--remote upstream: no such git remote in .* \(see 'git remote -v'\)$/)
    await expect(startDashboard({cwd: root, env: GIT_ENV, port: '0', remote: '-x', print: (l) => lines.push(l)})).rejects.toThrow(/^invalid --remote '-x'/)
    expect(lines).toEqual([])
  })
})
