// SPEC 20.2 / 20.4 through the built CLI (npm run build first), session 34's adversary:
// a `--remote` host killed (kill -9) while the resolve action works on a conflict. The
// worktree is left in a stopped rebase (HEAD detached); the next start finishes the
// attempt: the implementing agent does not run again, the conflict goes back to the
// resolve action, and the bead lands once with no conflict marker on the base.
// The fix it proves (src/git/leftovers.ts) is shown in `npm test` by landing/resolve-stop.e2e;
// this --remote case runs under `npm run test:stress` (HELIX_STRESS_FULL=1, in .ci/run) only.
import {existsSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {startCli} from '../support/cli.js'
import {GIT_ISOLATION} from '../support/git.js'
import {waitFor} from '../support/wait.js'
import {BIN, tipBeads} from './fleet-harness.js'
import {agentCalls, bead, g, makeFleet, otherHostLands} from './helpers.js'

const itFull = STRESS_FULL ? it : it.skip

const AGENT = path.resolve(import.meta.dirname, '..', 'pr', 'pr-agent.pl')
const MARKER = /^(<<<<<<< |=======|>>>>>>> )/m
const calls = (log: string) => agentCalls<{action: string; bead: string}>(log)

describe('helix run --remote killed during a resolve', () => {
  itFull('the next start resolves and lands the attempt without running the implementation again', async () => {
    const f = makeFleet([bead('hx-1')], {'shared.txt': 'start\n'})
    const log = path.join(f.dir, 'agent.jsonl')
    const gate = path.join(f.dir, 'gate')
    const dir = f.clone('host-a')
    const args = ['run', '--remote', 'origin', '--agent', AGENT, '--no-auto-review', '--review-every', '0', '--lease', '30', '--land-check', 'true']
    const env = {...GIT_ISOLATION, HELIX_HOST: 'host-a', PR_AGENT_LOG: log, FLEET_HELIX: BIN, PR_AGENT_GATE: gate, PR_AGENT_GATE_BEAD: 'hx-1'}
    const c = startCli(args, {cwd: dir, env: {...env, PR_AGENT_RESOLVE: 'hang'}, stdin: 'ignore'})
    // hx-1's agent is at work: another host lands a change of the same line, so hx-1's landing stops on a conflict
    await waitFor(() => existsSync(`${gate}.waiting`), {timeoutMs: 60_000, what: `hx-1's agent at work\n${c.output}`})
    otherHostLands(f)
    writeFileSync(gate, '')
    await waitFor(() => calls(log).some((x) => x.action === 'resolve'), {timeoutMs: 60_000, what: `the resolve call\n${c.output}`})
    c.child.kill('SIGKILL')
    await c.done
    // the restart ends the dead run's hanging resolve (its leftover processes, 14.5) and finishes the attempt
    const again = startCli(args, {cwd: dir, env, stdin: 'ignore'})
    const r = await again.done
    const out = again.output
    expect(r.code, out).toBe(0)
    expect(calls(log).filter((x) => x.action === 'implementation'), out).toHaveLength(1)
    expect(out).toMatch(/resuming hx-1 attempt 1 after a crash/)
    expect(out).toMatch(/hx-1 CONFLICT in 1 file\(s\) → resolve/)
    expect(out).toMatch(/resolved, landed hx-1/)
    expect(tipBeads(f.bare).map((b) => [b.id, b.status])).toEqual([['hx-1', 'closed']])
    for (const sha of g(f.bare, 'rev-list', 'main', '--', 'shared.txt').split('\n')) expect(g(f.bare, 'show', `${sha}:shared.txt`), sha).not.toMatch(MARKER)
    expect(g(f.bare, 'show', 'main:shared.txt').split('\n').sort()).toEqual(['hx-1', 'other'])
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
  }, 200_000)
})
