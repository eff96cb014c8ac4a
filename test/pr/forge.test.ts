// The forge port (SPEC 20.5): gh's answers parsed defensively, the --pr-command adapter's
// JSON protocol, and the --land pr flags as bad input.
import {chmodSync, existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {commandForge} from '../../src/forge/command.js'
import {ghForge} from '../../src/forge/gh.js'
import {parsePrView, rollupChecks} from '../../src/forge/types.js'
import {parsePrFlags} from '../../src/cli/pr-flags.js'
import {makeTempDir} from '../support/tmp.js'
import {bead, FORGE_BIN, g, protectedForge} from './helpers.js'

describe('gh pr view --json answers', () => {
  // the shape gh 2.23 prints for `--json state,mergedAt,mergeCommit,url,mergeable,statusCheckRollup,createdAt,comments`
  // (gh's manual: `gh pr view --help`, JSON FIELDS; statusCheckRollup items are CheckRun or StatusContext)
  const gh = {
    url: 'https://github.com/o/r/pull/7',
    state: 'MERGED',
    mergedAt: '2026-11-27T01:00:00Z',
    mergeCommit: {oid: 'abc123'},
    mergeable: 'UNKNOWN',
    createdAt: '2026-11-26T23:00:00Z',
    statusCheckRollup: [{__typename: 'CheckRun', name: 'ci', status: 'COMPLETED', conclusion: 'SUCCESS'}],
    comments: [{author: {login: 'a'}, body: 'first'}, {author: {login: 'b'}, body: 'closing: wrong approach'}],
  }

  it('reads state, merge commit, checks and the last comment', () => {
    expect(parsePrView(gh)).toEqual({url: gh.url, state: 'merged', mergedAt: gh.mergedAt, mergeCommit: 'abc123', mergeable: 'unknown', checks: 'passing', createdAt: gh.createdAt, lastComment: 'closing: wrong approach'})
  })

  it('refuses what is not a pull request, whatever else it says', () => {
    for (const bad of [null, [], 'x', {state: 'OPEN'}, {url: 'u', state: 'DRAFTED'}, {url: 42, state: 'OPEN'}]) expect(parsePrView(bad)).toBeNull()
  })

  it('rolls the required checks up into one word', () => {
    expect(rollupChecks([])).toBe('none')
    expect(rollupChecks([{status: 'IN_PROGRESS', conclusion: ''}, {status: 'COMPLETED', conclusion: 'SUCCESS'}])).toBe('pending')
    expect(rollupChecks([{status: 'IN_PROGRESS'}, {status: 'COMPLETED', conclusion: 'FAILURE'}])).toBe('failing')
    expect(rollupChecks([{__typename: 'StatusContext', context: 'ci', state: 'ERROR'}])).toBe('failing')
    expect(rollupChecks([{__typename: 'StatusContext', context: 'ci', state: 'PENDING'}])).toBe('pending')
    expect(rollupChecks([{__typename: 'StatusContext', context: 'ci', state: 'SUCCESS'}])).toBe('passing')
  })

  it('gh adapter against the stand-in: logged in, a head not on the remote refused in one line, an unknown PR is null', async () => {
    const dir = makeTempDir('helix-gh-')
    const forge = ghForge({cwd: dir, env: {...process.env, PATH: `${FORGE_BIN}${path.delimiter}${process.env.PATH ?? ''}`, FORGE_STATE: path.join(dir, 'forge.json'), FORGE_REMOTE: dir}, bin: path.join(FORGE_BIN, 'gh')})
    expect(await forge.auth()).toEqual({ok: true})
    // the stand-in refuses a head that is not on the remote, as GitHub does
    await expect(forge.create({base: 'main', head: 'helix/hx-9', title: 't', body: 'b'})).rejects.toThrow(/gh pr create failed: .*Head ref must be a branch/)
    expect(await forge.view('https://forge.test/team/repo/pull/99')).toBeNull()
  })

  it("the stand-in's own merge: a clean one exits 0 and merges, a conflicting one exits 1 and leaves the pull request open", () => {
    // the stand-in removes its scratch clone at exit: that must not turn a refused merge into exit 0,
    // or a test waiting for "mergeable" would go on while the pull request is still open
    const f = protectedForge([bead('hx-1')], {'a.txt': 'one\n'})
    const c = f.clone('dev')
    const body = path.join(f.dir, 'body.md')
    writeFileSync(body, 'b\n')
    for (const [branch, text] of [['b1', 'two\n'], ['b2', 'three\n']] as const) {
      g(c, 'checkout', '-q', '-B', branch, 'origin/main')
      writeFileSync(path.join(c, 'a.txt'), text)
      g(c, 'commit', '-q', '-am', branch)
      g(c, 'push', '-q', 'origin', `${branch}:refs/heads/${branch}`)
      expect(f.gh('pr', 'create', '--base', 'main', '--head', branch, '--title', branch, '--body-file', body).code).toBe(0)
    }
    expect(f.gh('forge', 'merge', '1', '--merge').code).toBe(0)
    for (const how of ['--rebase', '--squash', '--merge']) {
      const r = f.gh('forge', 'merge', '2', how)
      expect(r.code, how).toBe(1)
      expect(r.out).toMatch(/merge conflict: pull request #2 cannot be merged/)
    }
    expect(f.prs().map((p) => p.state)).toEqual(['MERGED', 'OPEN'])
    expect(g(f.bare, 'show', 'main:a.txt')).toBe('two')
    expect(existsSync(`${f.state}.lock`)).toBe(false)
  })
})

describe('--pr-command adapter', () => {
  function adapter(body: string): string {
    const file = path.join(makeTempDir('helix-prcmd-'), 'forge.sh')
    writeFileSync(file, `#!/bin/sh\nfor a; do verb="$a"; done\ninput=$(cat)\n${body}\n`)
    chmodSync(file, 0o755)
    return file
  }

  it('sends the verb and one JSON object, reads one JSON object', async () => {
    const log = path.join(makeTempDir('helix-prcmd-log-'), 'calls')
    const cmd = adapter(`printf '%s %s\\n' "$verb" "$input" >> '${log}'
case "$verb" in
  auth) echo '{"ok":true}' ;;
  create) echo '{"url":"https://git.test/mr/3"}' ;;
  view) echo '{"url":"https://git.test/mr/3","state":"open","mergeable":"conflicting","checks":"failing"}' ;;
  checks-log) echo '{"log":"lint failed"}' ;;
  *) echo '{}' ;;
esac`)
    const f = commandForge(`${cmd} --project x`, {cwd: process.cwd(), env: process.env})
    expect(await f.auth()).toEqual({ok: true})
    expect(await f.create({base: 'main', head: 'helix/hx-1', title: "hx-1: a 'quoted' $(title)", body: 'b'})).toEqual({url: 'https://git.test/mr/3'})
    expect(await f.view('https://git.test/mr/3')).toMatchObject({state: 'open', mergeable: 'conflicting', checks: 'failing'})
    await f.mergeAuto('https://git.test/mr/3', 'squash')
    expect(await f.checksLog('https://git.test/mr/3')).toBe('lint failed')
    const calls = readFileSync(log, 'utf8').trim().split('\n')
    expect(calls.map((l) => l.split(' ')[0])).toEqual(['auth', 'create', 'view', 'merge-auto', 'checks-log'])
    // the title went as JSON data, never as a shell word
    expect(JSON.parse(calls[1]?.slice('create '.length) ?? '')).toMatchObject({head: 'helix/hx-1', title: "hx-1: a 'quoted' $(title)"})
  })

  it('a refusal or a non-JSON answer is a one-line failure', async () => {
    const f = commandForge(adapter(`[ "$verb" = auth ] && { echo '{"ok":false,"message":"token expired"}'; exit 0; }\necho 'not json'`), {cwd: process.cwd(), env: process.env})
    expect(await f.auth()).toEqual({ok: false, message: expect.stringMatching(/auth' failed: token expired/)})
    await expect(f.create({base: 'main', head: 'h', title: 't', body: 'b'})).rejects.toThrow(/--pr-command create failed: its answer is not a JSON object/)
    const missing = commandForge('/nonexistent/forge-adapter', {cwd: process.cwd(), env: process.env})
    expect(await missing.auth()).toEqual({ok: false, message: expect.stringMatching(/is not installed or not executable/)})
  })
})

describe('--land pr flags', () => {
  it('defaults, values, and bad input naming the flag', () => {
    expect(parsePrFlags('pr', {}, {}, true)).toEqual({autoMerge: null, waitSec: 1800, pollSec: 60, command: null})
    expect(parsePrFlags('pr', {'pr-auto-merge': 'rebase', 'pr-wait': '0', 'pr-poll': '5'}, {}, true)).toMatchObject({autoMerge: 'rebase', waitSec: 0, pollSec: 5})
    expect(parsePrFlags('pr', {}, {HELIX_PR_COMMAND: 'glab-adapter --x'}, true)?.command).toBe('glab-adapter --x')
    expect(parsePrFlags('ff', {}, {}, false)).toBeNull()
    expect(() => parsePrFlags('pr', {}, {}, false)).toThrow(/--land pr needs --remote <name>/)
    expect(() => parsePrFlags('pr', {'pr-auto-merge': 'fast'}, {}, true)).toThrow("invalid --pr-auto-merge 'fast': expected squash, merge or rebase")
    expect(() => parsePrFlags('pr', {'pr-poll': '0'}, {}, true)).toThrow("invalid --pr-poll '0': expected seconds, a whole number ≥ 1")
    expect(() => parsePrFlags('ff', {'pr-wait': '10'}, {}, true)).toThrow('--pr-wait needs --land pr')
  })
})

describe('the pull request text', () => {
  it('carries the bead and the agent verbatim but inert: no raw HTML, no pings, no escapes, a fence nothing inside can end', async () => {
    const {prBody, prTitle} = await import('../../src/landing/pr-shared.js')
    const b = {id: 'hx-1', title: 'fix\u001b[31m it\nnow', status: 'closed', description: 'see <script>alert(1)</script> and ask @team'}
    expect(prTitle(b)).toBe('hx-1: fix[31m it now')
    const body = prBody(b, {summary: 'done\n```\n<img src=x onerror=alert(1)>\n```'})
    expect(body).toContain('see &lt;script&gt;alert(1)&lt;/script&gt; and ask @\u200bteam')
    expect(body).toContain('````text\ndone\n```\n<img src=x onerror=alert(1)>\n```\n````')
    expect(body).not.toContain('\u001b')
    expect(body).toContain('no review ran for this attempt')
  })
})
