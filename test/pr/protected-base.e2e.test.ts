// A protected base without --land pr (SPEC 20.1: a refusal that is not the bead's): the remote's
// pre-receive hook refuses every push to main. The run stops after the first refused landing with
// the remote's own words and the fix, the work kept on the remote, the bead neither counted nor
// noted, its claim gone; it never redoes the bead nor blames it. Built CLI, real git, real hook.
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {BIN, startCli} from '../support/cli.js'
import {GIT_ISOLATION} from '../support/git.js'
import {AGENT, events, tipBeads, until} from '../remote/fleet-harness.js'
import {bead, g, protectedForge, stateOverlay} from './helpers.js'

describe('helix run --remote against a protected base, without --land pr', () => {
  it('stops at the first refused landing, in the remote words, with the work kept and the bead not blamed', async () => {
    const f = protectedForge([bead('hx-1'), bead('hx-2')])
    const dir = f.clone('host-a')
    const log = path.join(f.dir, 'agents.jsonl')
    const mainBefore = g(f.bare, 'rev-parse', 'main')
    const c = startCli(['run', '--remote', 'origin', '--agent', AGENT, '--no-auto-review', '--review-every', '0'], {cwd: dir, env: {...GIT_ISOLATION, ...f.env, HELIX_HOST: 'host-a', FLEET_LOG: log, FLEET_HELIX: BIN, FLEET_SLEEP_MS: '50'}, stdin: 'ignore'})
    const r = await c.done
    expect(r.code, c.output).toBe(1)
    expect(c.output).toMatch(
      /^helix: the remote origin refuses helix's push to main \(\[remote rejected\] \(pre-receive hook declined\): main is protected: merge through a pull request\); hx-1's work is kept at refs\/helix\/preserved\/hx-1\/1\. A base that merges only through review lands with --land pr; else let helix push to main$/m,
    )
    expect(c.output).not.toMatch(/internal error|blocking|not landed/)
    // one agent run, on one bead
    expect(events(log).filter((e) => e.event === 'start').map((e) => e.bead)).toEqual(['hx-1'])
    // the base is untouched and took no bookkeeping; the work is on the remote; no claim is left
    expect(g(f.bare, 'rev-parse', 'main')).toBe(mainBefore)
    expect(tipBeads(f.bare).map((b) => Object.keys(b).filter((k) => k.startsWith('helix-') || k === 'notes'))).toEqual([[], []])
    expect(g(f.bare, 'log', '-1', '--format=%s', 'refs/helix/preserved/hx-1/1')).toBe('work on hx-1')
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('')
  }, 120_000)
})

describe('helix run --land pr when the forge refuses helix itself', () => {
  it('a token without the right to open pull requests stops the run at the first bead: the forge words, the work kept, the bead not counted', async () => {
    const f = protectedForge([bead('hx-1'), bead('hx-2')])
    const dir = f.clone('host-a')
    const log = path.join(f.dir, 'agents.jsonl')
    const c = startCli(['run', '--remote', 'origin', '--land', 'pr', '--pr-wait', '0', '--agent', AGENT, '--no-auto-review', '--review-every', '0'], {
      cwd: dir,
      env: {...GIT_ISOLATION, ...f.env, FORGE_CREATE_DENIED: '1', HELIX_HOST: 'host-a', FLEET_LOG: log, FLEET_HELIX: BIN, FLEET_SLEEP_MS: '50'},
      stdin: 'ignore',
    })
    const r = await c.done
    expect(r.code, c.output).toBe(1)
    expect(c.output).toMatch(
      /^helix: gh refuses to open pull requests \(gh pr create failed: pull request create failed: GraphQL: Resource not accessible by integration \(createPullRequest\)\); hx-1's work is kept at refs\/helix\/preserved\/hx-1\/1\. To go on, give helix's login the right to open pull requests on origin \('gh auth status' names the login and its scopes\)$/m,
    )
    expect(c.output).not.toMatch(/internal error|blocking|not landed/)
    expect(events(log).filter((e) => e.event === 'start').map((e) => e.bead)).toEqual(['hx-1'])
    // kept on the remote, no pull request, no claim, and the bead neither counted nor noted on refs/helix/state
    expect(g(f.bare, 'log', '--format=%s', 'main..refs/helix/preserved/hx-1/1').split('\n')).toContain('work on hx-1')
    expect(f.prs()).toEqual([])
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('')
    expect(stateOverlay(f.bare).get('hx-1')?.['helix-attempts']).toBeUndefined()
  }, 120_000)
})

describe('helix run --land pr when the forge cannot be reached', () => {
  const run = (f: ReturnType<typeof protectedForge>, dir: string, log: string, offline: string, extra: string[] = []) =>
    startCli(['run', '--remote', 'origin', '--land', 'pr', '--pr-wait', '0', '--agent', AGENT, '--no-auto-review', '--review-every', '0', '--summary', ...extra], {
      cwd: dir,
      env: {...GIT_ISOLATION, ...f.env, FORGE_CREATE_OFFLINE: offline, HELIX_HOST: 'host-a', FLEET_LOG: log, FLEET_HELIX: BIN, FLEET_SLEEP_MS: '50'},
      stdin: 'ignore',
    })

  it('a finished attempt waits for the forge with its claim and worktree, and opens its pull request once gh answers: the agent runs once, nothing counted', async () => {
    const f = protectedForge([bead('hx-1')])
    const dir = f.clone('host-a')
    const log = path.join(f.dir, 'agents.jsonl')
    const offline = path.join(f.dir, 'offline')
    writeFileSync(offline, '')
    // the land check passes once; the tries after a wait are on the same candidate and do not run it again
    const checks = path.join(f.dir, 'checks')
    const c = run(f, dir, log, offline, ['--land-check', `echo checked >> '${checks}'`])
    await until(() => /hx-1's pull request waits until gh answers \(gh pr create failed: error connecting to api\.github\.com\); its claim and worktree are kept/.test(c.output), 60_000, 'the landing to wait for gh')
    // a few tries meanwhile; the claim is still this host's, no pull request yet, nothing preserved
    await new Promise((r) => setTimeout(r, 2500))
    expect(f.prs()).toEqual([])
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('refs/helix/claims/hx-1')
    rmSync(offline)
    const r = await c.done
    expect(r.code, c.output).toBe(0)
    expect(c.output).not.toMatch(/not landed|NOT LANDED|internal error/)
    expect(c.output).toMatch(/pull request opened for hx-1/)
    expect(events(log).filter((e) => e.event === 'start').map((e) => e.bead)).toEqual(['hx-1'])
    expect(f.prs()).toHaveLength(1)
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/preserved/')).toBe('')
    expect(stateOverlay(f.bare).get('hx-1')?.['helix-attempts']).toBeUndefined()
    expect(readFileSync(checks, 'utf8')).toBe('checked\n')
  }, 120_000)

  it('a forge away past --max-offline stops the run with exit 4, the work kept and the bead not counted', async () => {
    const f = protectedForge([bead('hx-1'), bead('hx-2')])
    const dir = f.clone('host-a')
    const log = path.join(f.dir, 'agents.jsonl')
    const offline = path.join(f.dir, 'offline')
    writeFileSync(offline, '')
    const c = run(f, dir, log, offline, ['--max-offline', '2'])
    const r = await c.done
    expect(r.code, c.output).toBe(4)
    expect(c.output).toMatch(
      /^helix: gh could not be reached for more than 2s \(--max-offline\): gh pr create failed: error connecting to api\.github\.com; hx-1's work is kept at refs\/helix\/preserved\/hx-1\/1\. To go on, check the network and the forge \('gh auth status' tries it\), then run helix again$/m,
    )
    expect(events(log).filter((e) => e.event === 'start').map((e) => e.bead)).toEqual(['hx-1'])
    expect(f.prs()).toEqual([])
    expect(g(f.bare, 'log', '--format=%s', 'main..refs/helix/preserved/hx-1/1').split('\n')).toContain('work on hx-1')
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('')
    expect(stateOverlay(f.bare).get('hx-1')?.['helix-attempts']).toBeUndefined()
  }, 120_000)
})
