// SPEC 20.5: pull requests in plain `helix status` (text and --json) and in `helix report`
// (text, HTML, --json, the "needs you" line), read from what the last --land pr look saw
// (.helix/pull-requests.json) and refreshed through the forge at most once a minute per pull
// request. The forge is a --pr-command adapter named in the project's config file (not the
// environment), which logs every call.
import {mkdirSync, readFileSync, writeFileSync, existsSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {statusOutput} from '../../src/operator/report.js'
import {reportModel} from '../../src/report/index.js'
import {renderReportText} from '../../src/report/text.js'
import {renderReportHtml} from '../../src/report/html.js'
import {readPrCache} from '../../src/forge/pr-cache.js'
import {helixProjectSync} from '../support/project.js'

const ADAPTER = `import {appendFileSync, readFileSync} from 'node:fs'
const input = JSON.parse(readFileSync(0, 'utf8') || '{}')
appendFileSync(process.env.ADAPTER_LOG, JSON.stringify([process.argv[2], input]) + '\\n')
if (process.argv[2] === 'view') console.log(JSON.stringify({url: input.ref, state: 'open', checks: 'passing', mergeable: 'conflicting', createdAt: null}))
else console.log('{}')
`

function setup(now: Date) {
  const p = helixProjectSync({beads: [{id: 'hx-1', title: 'add the parser'}, {id: 'hx-2', title: 'fix <b>the</b> lexer'}]})
  const adapter = path.join(p.root, '..', 'adapter.mjs')
  writeFileSync(adapter, ADAPTER)
  const log = path.join(p.root, '..', 'adapter.log')
  mkdirSync(path.join(p.root, '.helix'), {recursive: true})
  writeFileSync(path.join(p.root, '.helix', 'config.json'), JSON.stringify({'pr-command': `${process.execPath} ${adapter}`}))
  const ago = (s: number) => new Date(now.getTime() - s * 1000).toISOString()
  const row = (bead: string, n: number, seen: string | null, checks: string, mergeable: string) => ({bead, url: `https://forge.test/team/repo/pull/${n}`, title: '', host: 'host-a', opened_at: ago(600), state: 'open', checks, mergeable, seen_at: seen})
  // hx-1 was seen 10 s ago with a failing check; hx-2 two minutes ago: its view is stale
  writeFileSync(path.join(p.root, '.helix', 'pull-requests.json'), JSON.stringify({version: 1, prs: [row('hx-1', 1, ago(10), 'failing', 'mergeable'), row('hx-2', 2, ago(120), 'pending', 'mergeable')]}))
  const env: NodeJS.ProcessEnv = {...process.env, ...p.env, ADAPTER_LOG: log}
  delete env.HELIX_PR_COMMAND
  const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as [string, {ref?: string}]) : [])
  return {p, env, calls}
}

describe('pull requests in plain status and in the report', () => {
  it('status --json and text list them; only the stale one is asked of the forge (the config file names it), once a minute', async () => {
    const now = new Date()
    const {p, env, calls} = setup(now)
    const json = JSON.parse(await statusOutput({cwd: p.root, env, json: true, now})) as {pull_requests: Array<Record<string, unknown>>}
    expect(json.pull_requests).toEqual([
      expect.objectContaining({bead: 'hx-1', url: 'https://forge.test/team/repo/pull/1', checks: 'failing', mergeable: 'mergeable', age_s: 600}),
      expect.objectContaining({bead: 'hx-2', url: 'https://forge.test/team/repo/pull/2', checks: 'passing', mergeable: 'conflicting', age_s: 600}),
    ])
    expect(calls()).toEqual([['view', {ref: 'https://forge.test/team/repo/pull/2'}]])
    // what the forge said is shared through the file: the next reader within the minute asks nothing
    expect(readPrCache(p.root)?.find((r) => r.bead === 'hx-2')?.seen_at).toBe(now.toISOString())
    const text = await statusOutput({cwd: p.root, env, now: new Date(now.getTime() + 30_000)})
    expect(text).toMatch(/pull requests awaiting merge: 2\n {2}hx-1 https:\/\/forge\.test\/team\/repo\/pull\/1 \(age 11m, checks failing, mergeable\)\n {2}hx-2 https:\/\/forge\.test\/team\/repo\/pull\/2 \(age 11m, checks passing, conflicting\)/)
    expect(calls()).toHaveLength(1)
    // a minute later both are asked again, once each
    await statusOutput({cwd: p.root, env, json: true, now: new Date(now.getTime() + 61_000)})
    expect(calls().map((c) => c[1].ref).sort()).toEqual(['https://forge.test/team/repo/pull/1', 'https://forge.test/team/repo/pull/2', 'https://forge.test/team/repo/pull/2'])
  })

  it('the report lists them (text, HTML, JSON) and its "needs you" line names the failing check and the conflict', async () => {
    const now = new Date()
    const {p, env} = setup(now)
    const r = await reportModel({cwd: p.root, env, now})
    expect(r.pull_requests?.map((x) => [x.bead, x.checks, x.mergeable])).toEqual([
      ['hx-1', 'failing', 'mergeable'],
      ['hx-2', 'passing', 'conflicting'],
    ])
    expect(r.needs_you).toEqual([
      {id: 'hx-1', title: 'add the parser', why: 'pull request https://forge.test/team/repo/pull/1: checks failing'},
      {id: 'hx-2', title: 'fix <b>the</b> lexer', why: 'pull request https://forge.test/team/repo/pull/2: conflicts with the base'},
    ])
    const text = renderReportText(r)
    expect(text.split('\n')[0]).toBe('2 beads need you: hx-1 pull request https://forge.test/team/repo/pull/1: checks failing; hx-2 pull request https://forge.test/team/repo/pull/2: conflicts with the base')
    expect(text).toContain('Pull requests awaiting merge (2):\n  hx-1  https://forge.test/team/repo/pull/1  checks failing, mergeable, age 10m — add the parser')
    const html = renderReportHtml(r)
    expect(html).toContain('<h2>Pull requests awaiting merge (2)</h2>')
    expect(html).toContain('<a href="https://forge.test/team/repo/pull/2" rel="noopener noreferrer">')
    expect(html).toContain('fix &lt;b&gt;the&lt;/b&gt; lexer')
    expect(html).not.toContain('<b>the</b>')
  })

  it('without a --land pr run here (no file) status and report show no pull requests and ask no forge', async () => {
    const p = helixProjectSync({beads: [{id: 'hx-1'}]})
    const json = JSON.parse(await statusOutput({cwd: p.root, env: {...process.env, ...p.env}, json: true})) as Record<string, unknown>
    expect(json).not.toHaveProperty('pull_requests')
    const r = await reportModel({cwd: p.root, env: {...process.env, ...p.env}})
    expect(r.pull_requests).toBeUndefined()
  })
})
