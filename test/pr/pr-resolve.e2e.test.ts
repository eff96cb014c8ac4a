// SPEC 20.4 on open pull requests (SPEC 20.5): a conflict outside the tracker and a failing
// required check go back to the same agent (HELIX_ACTION=resolve) in a fresh worktree of the
// pull request's branch; the branch is pushed again; rounds are bounded by --resolve-attempts,
// then the pull request stays for a person, said once. Built CLI (npm run build first), a
// PROTECTED bare remote and the gh stand-in (fixtures/forge/gh); the agent is test/pr/pr-agent.pl.
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {startCli} from '../support/cli.js'
import {GIT_ISOLATION} from '../support/git.js'
import {GIT_POLL_MS, waitFor} from '../support/wait.js'
import {BIN, tipBeads} from '../remote/fleet-harness.js'
import {bead, g, protectedForge} from './helpers.js'

const AGENT = path.resolve(import.meta.dirname, 'pr-agent.pl')

function host(dir: string, agentLog: string, args: string[], env: NodeJS.ProcessEnv) {
  const c = startCli(['run', '--remote', 'origin', '--land', 'pr', '--pr-poll', '4', '--agent', AGENT, '--no-auto-review', '--review-every', '0', '--summary', ...args], {
    cwd: dir,
    env: {...GIT_ISOLATION, HELIX_HOST: 'host-a', PR_AGENT_LOG: agentLog, FLEET_HELIX: BIN, ...env},
    detached: true,
    stdin: 'ignore',
  })
  return {out: () => c.output, done: c.done.then((r) => r.code)}
}

const calls = (log: string) =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as {action: string; bead: string; env_action: string | null; log: string | null; cwd: string})
    : []
const onMain = (bare: string, id: string) => tipBeads(bare).find((b) => b.id === id)

describe('helix run --land pr: conflicts and red checks go back to the agent', () => {
  // one run for two rounds on the same pull request (they were two runs): a conflict with the
  // base after another pull request merged, then a failing required check on the resolved head
  it('two open pull requests conflicting outside the tracker: after the first merges, the second is resolved by the agent and pushed again; then its required check fails: the check\'s output goes to the agent in .helix/land-check.log, the fix is pushed and merged', async () => {
    const f = protectedForge([bead('hx-1'), bead('hx-2')])
    const log = path.join(f.dir, 'agent.jsonl')
    const h = host(f.clone('host-a'), log, ['--pr-wait', '120'], f.env)
    const open = (id: string) => f.prs().find((p) => p.head === `helix/${id}` && p.state === 'OPEN')
    await waitFor(() => open('hx-1') !== undefined && open('hx-2') !== undefined, {timeoutMs: 60_000, what: `both pull requests\n${h.out()}`})
    const p2 = open('hx-2')
    const before = g(f.bare, 'rev-parse', 'helix/hx-2')
    const rebased = f.pushedAgain('helix/hx-2', before)
    expect(f.gh('forge', 'merge', String(open('hx-1')?.number), '--squash').code).toBe(0)
    // shared.txt now conflicts (both beads wrote it): the sweep's rebase stops, the agent resolves
    await waitFor(rebased, {timeoutMs: 60_000, intervalMs: GIT_POLL_MS, what: `helix/hx-2 pushed again\n${h.out()}`})
    const resolves = calls(log).filter((c) => c.action === 'resolve')
    expect(resolves.map((c) => [c.bead, c.env_action])).toEqual([['hx-2', 'resolve']])
    expect(g(f.bare, 'show', 'helix/hx-2:shared.txt').split('\n')).toEqual(['hx-1', 'hx-2'])
    expect(g(f.bare, 'merge-base', '--is-ancestor', 'main', 'helix/hx-2')).toBe('')
    expect(h.out()).not.toMatch(/required check failing/)

    // the resolved head's required check fails: a second round, with the check's output
    const resolved = g(f.bare, 'rev-parse', 'helix/hx-2')
    const fixed = f.pushedAgain('helix/hx-2', resolved)
    expect(f.gh('forge', 'checks', String(p2?.number), 'failing').code).toBe(0)
    await waitFor(fixed, {timeoutMs: 60_000, intervalMs: GIT_POLL_MS, what: `helix/hx-2 pushed again with a fix\n${h.out()}`})
    const r = calls(log).filter((c) => c.action === 'resolve')
    expect(r.map((c) => [c.bead, c.env_action])).toEqual([['hx-2', 'resolve'], ['hx-2', 'resolve']])
    // the check's output (gh pr checks), outside the tracked files
    expect(r[1]?.log).toMatch(/^ci\s+fail/)
    expect(g(f.bare, 'show', 'helix/hx-2:fix.txt')).toBe('the check passes now')
    expect(g(f.bare, 'show', 'helix/hx-2:shared.txt').split('\n')).toEqual(['hx-1', 'hx-2'])
    expect(g(f.bare, 'ls-tree', '-r', '--name-only', 'helix/hx-2')).not.toMatch(/land-check\.log/)
    expect(g(f.bare, 'rev-parse', 'helix/hx-2^')).toBe(resolved)
    expect(f.gh('forge', 'checks', String(p2?.number), 'passing').code).toBe(0)
    expect(f.gh('forge', 'merge', String(p2?.number), '--merge').code).toBe(0)
    expect(onMain(f.bare, 'hx-2')?.status).toBe('closed')
    expect(await h.done, h.out()).toBe(0)
    expect(h.out()).toMatch(/hx-2 CONFLICT in 1 file\(s\) with main \(https:\/\/forge\.test\/team\/repo\/pull\/2\) → resolve/)
    expect(h.out()).toMatch(/resolved hx-2, rebased helix\/hx-2 onto main/)
    expect(h.out()).toMatch(/hx-2 required check failing \(https:\/\/forge\.test\/team\/repo\/pull\/2\) → resolve/)
    expect(h.out()).toMatch(/resolved hx-2: pushed helix\/hx-2 again/)
    expect(h.out()).not.toMatch(/stays for a person/)
    // helix pushed only its own branches and refs; its scratch branch is gone
    expect(f.pushes().filter((p) => !p.forge).map((p) => p.ref).filter((r) => !/^refs\/heads\/helix\/|^refs\/helix\//.test(r))).toEqual([])
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix-pr-resolve/')).toBe('')
  }, 180_000)

  it('a conflict outside the tracker when opening: the loop sends it to the agent in the attempt worktree, then opens the pull request', async () => {
    const f = protectedForge([bead('hx-1'), bead('hx-2')])
    const log = path.join(f.dir, 'agent.jsonl')
    const gate = path.join(f.dir, 'gate')
    const h = host(f.clone('host-a'), log, ['--pr-wait', '120'], {...f.env, PR_AGENT_GATE: gate, PR_AGENT_GATE_BEAD: 'hx-2'})
    const open = (id: string) => f.prs().find((p) => p.head === `helix/${id}` && p.state === 'OPEN')
    await waitFor(() => open('hx-1') !== undefined && existsSync(`${gate}.waiting`), {timeoutMs: 60_000, what: `hx-1's pull request, hx-2's agent at work\n${h.out()}`})
    // hx-1 merges while hx-2's agent works: hx-2's rebase onto the new base stops on shared.txt
    expect(f.gh('forge', 'merge', String(open('hx-1')?.number), '--squash').code).toBe(0)
    writeFileSync(gate, '')
    await waitFor(() => open('hx-2') !== undefined, {timeoutMs: 60_000, what: `hx-2's pull request\n${h.out()}`})
    expect(calls(log).filter((c) => c.action === 'resolve').map((c) => [c.bead, c.env_action])).toEqual([['hx-2', 'resolve']])
    expect(g(f.bare, 'show', 'helix/hx-2:shared.txt').split('\n')).toEqual(['hx-1', 'hx-2'])
    expect(g(f.bare, 'show', 'helix/hx-2:.ddx/beads.jsonl')).toMatch(/"id":"hx-2"[^\n]*"status":"closed"/)
    expect(f.gh('forge', 'merge', String(open('hx-2')?.number), '--rebase').code).toBe(0)
    expect(await h.done, h.out()).toBe(0)
    expect(onMain(f.bare, 'hx-2')?.status).toBe('closed')
    expect(h.out()).toMatch(/hx-2 CONFLICT in 1 file\(s\) → resolve \([^)]*pr-agent\.pl\)/)
    expect(h.out()).toMatch(/pull request opened for hx-2: https:\/\/forge\.test\/team\/repo\/pull\/2/)
    expect(h.out()).toMatch(/run complete: 2 attempted, 2 completed/)
  }, 120_000)

  it('rounds spent: the pull request stays for a person, said once on the terminal and in the blocker report', async () => {
    const f = protectedForge([bead('hx-1')])
    const log = path.join(f.dir, 'agent.jsonl')
    const dir = f.clone('host-a')
    // --pr-wait 16 at --pr-poll 4: the run looks at the failing check about four times after the
    // round is spent (as 8 at 2 did), so 'said once' is said once across several looks
    const h = host(dir, log, ['--pr-wait', '16', '--resolve-attempts', '1'], {...f.env, PR_AGENT_RESOLVE: 'none'})
    await waitFor(() => f.prs().length === 1, {timeoutMs: 60_000, what: `the pull request\n${h.out()}`})
    const before = g(f.bare, 'rev-parse', 'helix/hx-1')
    expect(f.gh('forge', 'checks', '1', 'failing').code).toBe(0)
    expect(await h.done, h.out()).toBe(0)
    const out = h.out()
    expect(calls(log).filter((c) => c.action === 'resolve')).toHaveLength(1)
    expect(out).toMatch(/hx-1 resolve not done: the resolve committed no fix/)
    expect(out.match(/hx-1: a required check fails on https:\/\/forge\.test\/team\/repo\/pull\/1, not resolved after 1 round\(s\); the pull request stays for a person/g)).toHaveLength(1)
    // the blocker report names it (the loop skipped no bead, so this report is the pull requests')
    const logs = path.join(dir, '.helix-logs')
    const reports = readdirSync(logs).filter((n) => n.startsWith('blockers-'))
    expect(reports).toHaveLength(1)
    expect(readFileSync(path.join(logs, reports[0] as string), 'utf8')).toMatch(/### hx-1\n\n- Title: \n- Reason: pull request needs a person: a required check fails on https:\/\/forge\.test\/team\/repo\/pull\/1, not resolved after 1 round\(s\)/)
    expect(out).toMatch(/1 awaiting merge/)
    // nothing pushed over the pull request's branch
    expect(g(f.bare, 'rev-parse', 'helix/hx-1')).toBe(before)
  }, 120_000)
})
