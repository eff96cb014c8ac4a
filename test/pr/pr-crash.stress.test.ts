// `helix run --land pr` killed -9 inside the opening of a pull request (SPEC 20.5 with 19.4 and
// 20.1): between the push of helix/<id> and `gh pr create`, and between `gh pr create` and the
// claim's rewrite. A restart must neither open a second pull request nor run the agent again.
// Also a lease that runs out while the remote is away. Each scenario waits on real processes,
// leases and backoffs (3-12 s): `npm test` runs one (killed after gh pr create), `npm run
// test:stress` (HELIX_STRESS_FULL=1, in .ci/run) all of them.
// A gh in front of the stand-in stops at `pr create` (before or after the stand-in records it),
// marks that on disk, and waits for helix to be killed; the test then kills helix with SIGKILL.
import {chmodSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {waitFor} from '../support/wait.js'
import {AGENT, cloneBehindLink, events, startHost, tipBeads, until} from '../remote/fleet-harness.js'
import {BIN, startCli} from '../support/cli.js'
import {GIT_ISOLATION} from '../support/git.js'
import {bead, FORGE_BIN, g, protectedForge, stateOverlay, type Forge} from './helpers.js'

const itFull = STRESS_FULL ? it : it.skip

/**
 * host-a killed -9 at `gh pr create` (`at`: before or after the stand-in records it); once its plain
 * claim has run out (3 s lease, HELIX_LEASE_SKEW 1 s: read from the claim itself, no clock guess),
 * host-b starts on the same queue. `first`: helix/hx-1 on the remote as host-a left it.
 */
async function deadHostTakenOver(f: Forge, at: 'before' | 'after') {
  const log = path.join(f.dir, 'agents.jsonl')
  const env = {...stoppingGh(f), HELIX_LEASE_SKEW: '1', FLEET_SLEEP_MS: '50'}
  const args = ['--land', 'pr', '--pr-poll', '1', '--lease', '3', '--pr-wait', '0']
  const a = startHost(f.clone('host-a'), 'host-a', log, args, {...env, STOP_AT: at})
  await waitFor(() => existsSync(path.join(f.dir, 'stopped-at-create')), {timeoutMs: 120_000, what: `gh pr create to be reached\n${a.out()}`})
  process.kill(a.child.pid as number, 'SIGKILL')
  await a.done
  const first = g(f.bare, 'rev-parse', 'helix/hx-1')
  const claim0 = JSON.parse(g(f.bare, 'log', '-1', '--format=%B', 'refs/helix/claims/hx-1')) as {expires_at: string; pr_url?: string}
  await until(() => Date.now() > Date.parse(claim0.expires_at) + 2_000, 60_000, 'the claim of host-a to be takeable')
  return {log, first, claim0, b: startHost(f.clone('host-b'), 'host-b', log, args, env)}
}

const PR = ['--land', 'pr', '--pr-poll', '1', '--lease', '60']

/** a gh that, while $STOP_AT names `before` or `after`, stops at `pr create` and writes $STOP_MARK */
function stoppingGh(f: Forge): NodeJS.ProcessEnv {
  const bin = path.join(f.dir, 'stop-bin')
  const mark = path.join(f.dir, 'stopped-at-create')
  mkdirSync(bin)
  writeFileSync(
    path.join(bin, 'gh'),
    `#!/bin/sh
if [ "$1 $2" = "pr create" ] && [ -n "\${STOP_AT:-}" ]; then
  if [ "$STOP_AT" = after ]; then '${FORGE_BIN}/gh' "$@" > /dev/null 2>&1; fi
  : > '${mark}'
  while kill -0 "$PPID" 2>/dev/null; do sleep 0.2; done
  exit 1
fi
exec '${FORGE_BIN}/gh' "$@"
`,
  )
  chmodSync(path.join(bin, 'gh'), 0o755)
  // helix's body file for gh lives in TMPDIR: a kill -9 leaves it, so it goes with the test's directory
  const tmp = path.join(f.dir, 'tmp')
  mkdirSync(tmp)
  return {...f.env, PATH: `${bin}${path.delimiter}${f.env.PATH ?? ''}`, TMPDIR: tmp}
}

describe('helix run --land pr killed -9 while it opens a pull request (built CLI)', () => {
  for (const at of ['before', 'after'] as const) {
    ;(at === 'after' ? it : itFull)(`killed ${at} gh pr create: the restart opens (or finds) exactly one pull request and does not run the agent again`, async () => {
      const f = protectedForge([bead('hx-1')])
      const log = path.join(f.dir, 'agents.jsonl')
      const dir = f.clone('host-a')
      const env = stoppingGh(f)
      const h = startHost(dir, 'host-a', log, [...PR, '--pr-wait', '0'], {...env, STOP_AT: at, FLEET_SLEEP_MS: '50'})
      await waitFor(() => existsSync(path.join(f.dir, 'stopped-at-create')), {timeoutMs: 120_000, what: `gh pr create to be reached\n${h.out()}`})
      process.kill(h.child.pid as number, 'SIGKILL')
      await h.done
      expect(f.prs().length).toBe(at === 'after' ? 1 : 0)
      const again = startHost(dir, 'host-a', log, [...PR, '--pr-wait', '0'], {...env, FLEET_SLEEP_MS: '50'})
      const code = await again.done
      const out = again.out()
      expect(code, out).toBe(0)
      // one pull request for the bead, the claim carries it, and the agent ran once
      expect(f.prs().map((p) => [p.head, p.state]), out).toEqual([['helix/hx-1', 'OPEN']])
      expect(events(log).filter((e) => e.event === 'start'), out).toHaveLength(1)
      const claim = JSON.parse(g(f.bare, 'log', '-1', '--format=%B', 'refs/helix/claims/hx-1')) as Record<string, unknown>
      expect(claim.pr_url).toBe(f.prs()[0]?.url)
      expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/preserved/')).toBe('')
      // merged by the forge: closed on the base once
      expect(f.gh('forge', 'merge', '1', '--squash').code).toBe(0)
      expect(tipBeads(f.bare).filter((b) => b.id === 'hx-1').map((b) => b.status)).toEqual(['closed'])
      expect(f.pushes().filter((p) => !p.forge).map((p) => p.ref).filter((r) => !/^refs\/heads\/helix\/|^refs\/helix\//.test(r))).toEqual([])
    }, 300_000)
  }

  itFull('killed right after the claim took the pull request (before the worktree went): the restart finishes it with the same pull request, the agent not run again', async () => {
    const f = protectedForge([bead('hx-1')])
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('host-a')
    const mark = path.join(f.dir, 'claimed-pr')
    const go = path.join(f.dir, 'go')
    // a post-receive hook holds helix's push of the claim that carries pr_url (the ref is already updated)
    writeFileSync(
      path.join(f.bare, 'hooks', 'post-receive'),
      `#!/bin/sh
while read old new ref; do
  case "$ref" in refs/helix/claims/*)
    if [ -n "\${STOP_CLAIM:-}" ] && git cat-file commit "$new" | grep -q pr_url; then
      : > '${mark}'
      n=0; while [ ! -e '${go}' ] && [ $n -lt 1200 ]; do sleep 0.1; n=$((n+1)); done
    fi ;;
  esac
done
`,
    )
    chmodSync(path.join(f.bare, 'hooks', 'post-receive'), 0o755)
    const h = startHost(dir, 'host-a', log, [...PR, '--pr-wait', '0'], {...f.env, STOP_CLAIM: '1', FLEET_SLEEP_MS: '50'})
    try {
      await waitFor(() => existsSync(mark), {timeoutMs: 120_000, what: `the claim to take the pull request\n${h.out()}`})
      process.kill(-(h.child.pid as number), 'SIGKILL')
      await h.done
    } finally {
      writeFileSync(go, '')
    }
    const again = startHost(dir, 'host-a', log, [...PR, '--pr-wait', '0'], {...f.env, FLEET_SLEEP_MS: '50'})
    expect(await again.done, again.out()).toBe(0)
    expect(f.prs().map((p) => [p.number, p.state])).toEqual([[1, 'OPEN']])
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(1)
    expect(JSON.parse(g(f.bare, 'log', '-1', '--format=%B', 'refs/helix/claims/hx-1'))).toMatchObject({pr_url: 'https://forge.test/team/repo/pull/1'})
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/preserved/')).toBe('')
  }, 300_000)

  itFull('the remote gone between gh pr create and the claim taking its URL: the landing waits and tries again, one pull request, the claim carries it, nothing redone', async () => {
    const f = protectedForge([bead('hx-1')])
    const log = path.join(f.dir, 'agents.jsonl')
    const {dir, link} = cloneBehindLink(f, 'host-a')
    const cut = path.join(f.dir, 'cut')
    // a gh that, after the stand-in opened the pull request, cuts the host off the remote (once)
    const bin = path.join(f.dir, 'cut-bin')
    mkdirSync(bin)
    writeFileSync(
      path.join(bin, 'gh'),
      `#!/bin/sh
'${FORGE_BIN}/gh' "$@"; rc=$?
if [ "$1 $2" = "pr create" ] && [ ! -e '${cut}' ]; then : > '${cut}'; rm '${link}'; fi
exit $rc
`,
    )
    chmodSync(path.join(bin, 'gh'), 0o755)
    const h = startHost(dir, 'host-a', log, [...PR, '--pr-wait', '0', '--max-offline', '600'], {...f.env, PATH: `${bin}${path.delimiter}${f.env.PATH ?? ''}`, FLEET_SLEEP_MS: '50'})
    let ended = false
    void h.done.then(() => (ended = true))
    const waits = /hx-1's pull request waits until the remote origin answers/
    try {
      // (or the run ending without waiting: then the words are missing and the test says so at once)
      await until(() => ended || waits.test(h.out()), 120_000, `the landing to wait for the remote\n${h.out()}`)
      expect(h.out()).toMatch(waits)
    } finally {
      if (existsSync(cut)) symlinkSync(f.bare, link)
    }
    expect(await h.done, h.out()).toBe(0)
    expect(f.prs().map((p) => [p.number, p.state])).toEqual([[1, 'OPEN']])
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(1)
    expect(JSON.parse(g(f.bare, 'log', '-1', '--format=%B', 'refs/helix/claims/hx-1'))).toMatchObject({pr_url: 'https://forge.test/team/repo/pull/1', expires_at: '9999-12-31T23:59:59.000Z'})
    expect(h.out()).toMatch(/1 awaiting merge/)
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/preserved/')).toBe('')
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
  }, 300_000)

  itFull('killed before gh pr create, its lease run out: the host that takes the bead over keeps the dead host\'s pushed branch on a preserved ref before forcing its own', async () => {
    const f = protectedForge([bead('hx-1')])
    const {first, b} = await deadHostTakenOver(f, 'before')
    expect(await b.done, b.out()).toBe(0)
    // no pull request to adopt: host-b ran the bead; host-a's pushed work is kept, not forced away
    expect(b.out()).toMatch(/helix\/hx-1 held another attempt's work \(its host stopped before its pull request opened\): kept at refs\/helix\/preserved\/hx-1\/1/)
    expect(g(f.bare, 'rev-parse', 'refs/helix/preserved/hx-1/1')).toBe(first)
    expect(g(f.bare, 'show', 'refs/helix/preserved/hx-1/1:work/hx-1.txt')).toBe('done by host-a')
    expect(g(f.bare, 'show', 'helix/hx-1:work/hx-1.txt')).toBe('done by host-b')
    expect(f.prs().map((p) => [p.number, p.state])).toEqual([[1, 'OPEN']])
  }, 300_000)

  itFull('killed after gh pr create, its lease run out: another host adopts the open pull request instead of running the agent again over it', async () => {
    const f = protectedForge([bead('hx-1')])
    const {log, first, claim0, b} = await deadHostTakenOver(f, 'after')
    expect(claim0.pr_url).toBeUndefined()
    const code = await b.done
    const out = b.out()
    expect(code, out).toBe(0)
    expect(out).toMatch(/hx-1's pull request https:\/\/forge\.test\/team\/repo\/pull\/1 was opened by host-a, which stopped before its claim took it: it awaits merge/)
    // host-a's finished work is what is under review, once; the agent ran once
    expect(events(log).filter((e) => e.event === 'start'), out).toHaveLength(1)
    expect(g(f.bare, 'rev-parse', 'helix/hx-1')).toBe(first)
    expect(f.prs().map((p) => [p.number, p.state])).toEqual([[1, 'OPEN']])
    const claim = JSON.parse(g(f.bare, 'log', '-1', '--format=%B', 'refs/helix/claims/hx-1')) as Record<string, unknown>
    expect(claim).toMatchObject({host: 'host-a', pr_url: 'https://forge.test/team/repo/pull/1', expires_at: '9999-12-31T23:59:59.000Z'})
    expect(out).toMatch(/1 awaiting merge/)
    // merged by a person: the bead is closed on the base with host-a's work
    expect(f.gh('forge', 'merge', '1', '--rebase').code).toBe(0)
    expect(g(f.bare, 'show', 'main:work/hx-1.txt')).toBe('done by host-a')
    expect(tipBeads(f.bare).filter((x) => x.id === 'hx-1').map((x) => x.status)).toEqual(['closed'])
  }, 300_000)
})

describe('helix run --land pr when the remote is away past the lease', () => {
  itFull('a finished attempt whose lease runs out while the remote is away opens its pull request once the remote answers, when nobody took the bead over: the agent runs once (SPEC 20.1)', async () => {
    const f = protectedForge([bead('hx-1')])
    const {dir, link} = cloneBehindLink(f, 'host-e')
    const log = path.join(f.dir, 'agents.jsonl')
    const gate = path.join(f.dir, 'gate')
    // --lease 3: the partition outlasts it; --max-offline 600 outlasts the test
    const c = startCli(['run', '--remote', 'origin', '--land', 'pr', '--pr-wait', '0', '--lease', '3', '--max-offline', '600', '--agent', AGENT, '--no-auto-review', '--review-every', '0', '--summary'], {
      cwd: dir,
      env: {...GIT_ISOLATION, ...f.env, HELIX_HOST: 'host-e', FLEET_LOG: log, FLEET_HELIX: BIN, FLEET_SLEEP_MS: '1000', FLEET_GATE: gate},
      stdin: 'ignore',
    })
    await until(() => events(log).some((e) => e.event === 'start'), 60_000, 'the agent to start')
    // the remote goes before the agent may finish (its gate), however slow the machine
    rmSync(link)
    writeFileSync(gate, '')
    await until(() => /hx-1's pull request waits until the remote origin answers/.test(c.output), 60_000, 'the landing to wait for the remote')
    await until(() => /lost the claim on hx-1 \(its lease expired unrenewed\)/.test(c.output), 60_000, 'the lease to run out unrenewed')
    symlinkSync(f.bare, link)
    const r = await c.done
    expect(r.code, c.output).toBe(0)
    expect(c.output).toMatch(/pull request opened for hx-1/)
    expect(c.output).not.toMatch(/not landed|NOT LANDED|internal error/)
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(1)
    expect(f.prs()).toHaveLength(1)
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('refs/helix/claims/hx-1')
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/preserved/')).toBe('')
    expect(stateOverlay(f.bare).get('hx-1')?.['helix-attempts']).toBeUndefined()
  }, 120_000)
})
