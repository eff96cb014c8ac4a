// SPEC 20.2 (issue 26): a --remote host killed right before its landing push. A `git`
// shim first on PATH kill -9s helix (its parent) the first time helix runs
// `push --atomic`; both agents have committed and closed by then (a barrier). A plain
// `helix run` refuses to land the leftovers locally; the restart with --remote lands both
// beads without running the agent again, and leaves no worktree or helix/* branch. The
// hosts are built-CLI processes (the kill is the point); the plain run's refusal, doctor
// and recover between them run in-process (test/support/in-process.ts).
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {GIT_ISOLATION} from '../support/git.js'
import {killingGit} from '../support/git-shim.js'
import {helixInProcess} from '../support/in-process.js'
import {bead, g, makeFleet, remoteRefs} from './helpers.js'
import {AGENT, BIN, events, fleetProblems, startHost, tipBeads} from './fleet-harness.js'

describe('a --remote host killed before its landing push', () => {
  it('restarts and lands both closed attempts without the agent; a plain run refuses to land them locally', async () => {
    const ids = ['b1', 'b2']
    const f = makeFleet(ids.map((id) => bead(id)))
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('hA')
    const shim = killingGit({match: '*" push "*"--atomic"*'})
    const barrier = path.join(f.dir, 'barrier')
    const first = startHost(dir, 'hA', log, ['--workers', '2', '--lease', '10'], {PATH: shim.path(), FLEET_SLEEP_MS: '100', FLEET_BARRIER_DIR: barrier, FLEET_BARRIER_N: '2'})
    await first.done
    expect(shim.fired(), first.out()).toBe(1)
    expect(events(log).filter((e) => e.event === 'end').map((e) => e.bead).sort()).toEqual(ids)
    const wt = () => g(dir, 'worktree', 'list').split('\n').filter((l) => l.includes('.helix/worktrees'))
    expect(wt()).toHaveLength(2)

    // a plain run does not land a --remote run's attempts on the local base
    const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => helixInProcess(dir, args, {...GIT_ISOLATION, ...env})
    const plain = await cli(['run', '--agent', AGENT, '--workers', '2', '--no-auto-review', '--review-every', '0'], {HELIX_HOST: 'hA', FLEET_LOG: log, FLEET_HELIX: BIN})
    expect(plain.code, plain.stdout + plain.stderr).toBe(1)
    expect(plain.stderr + plain.stdout).toMatch(/helix: b[12] attempt 1 was left by 'helix run --remote origin'; run 'helix run --remote origin' to finish it/)
    expect(wt()).toHaveLength(2)
    expect(g(dir, 'log', '--format=%s', 'main').split('\n')).toEqual(['seed'])

    // doctor and recover agree with the remote: the advice names the --remote run; recover keeps them
    const trackerBefore = readFileSync(path.join(dir, '.ddx', 'beads.jsonl'), 'utf8')
    const doc = await cli(['doctor'])
    expect(doc.stdout + doc.stderr).toMatch(/b1 attempt 1 \(\d+ commit\(s\)\) of a 'helix run --remote origin' that ended/)
    expect(doc.stdout + doc.stderr).not.toMatch(/'helix run' finishes and lands it/)
    const rec = await cli(['recover', '--worktrees'])
    expect(rec.stdout + rec.stderr).toMatch(/kept worktree \.helix\/worktrees\/b1-1: it belongs to 'helix run --remote origin'/)
    expect(wt()).toHaveLength(2)
    // the checkout's tracker is not the queue: nothing reopened there
    expect(readFileSync(path.join(dir, '.ddx', 'beads.jsonl'), 'utf8')).toBe(trackerBefore)

    const again = startHost(dir, 'hA', log, ['--workers', '2', '--lease', '10'], {FLEET_SLEEP_MS: '100'})
    expect(await again.done, again.out()).toBe(0)
    const out = again.out()
    expect(out).toMatch(/resuming b1 attempt 1 after a crash/)
    expect(out).toMatch(/resuming b2 attempt 1 after a crash/)
    expect(out).not.toMatch(/took over the expired claim/)
    // the agent ran twice in all: once per bead, before the kill
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(2)
    expect(fleetProblems(f.bare, ids, log, 10_000), out).toEqual([])
    expect(tipBeads(f.bare).map((b) => b.status)).toEqual(['closed', 'closed'])
    expect(wt()).toEqual([])
    expect(g(dir, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
    const attempts = path.join(dir, '.helix', 'attempts')
    expect(existsSync(attempts) ? readdirSync(attempts) : []).toEqual([])
    // what is left on the remote is preserved work and the host's run records (SPEC 22.2)
    expect(remoteRefs(f.bare).filter((r) => !r.startsWith('refs/helix/preserved/'))).toEqual(['refs/helix/runs/hA'])
    // the clone's own main has each bead's work at most once
    const local = g(dir, 'log', '--format=%s', 'main').split('\n')
    for (const id of ids) expect(local.filter((s) => s === `work on ${id}`).length).toBeLessThanOrEqual(1)
    // at most one helix commit per landing beside the agent's
    const helixCommits = g(f.bare, 'log', '--format=%s', 'main').split('\n').filter((s) => s.startsWith('helix('))
    expect(helixCommits.length, helixCommits.join('\n')).toBeLessThanOrEqual(ids.length)
  }, 240_000)
})
