// SPEC 20.4 on `--remote` landings, through the built CLI (npm run build first): a bare
// remote, one host clone and a hand push from a second clone that moves the base under
// a working agent. hx-1's work then conflicts with the base: the same agent resolves it
// (HELIX_ACTION=resolve) and it lands; hx-2's work fails the land check: the agent fixes
// it and it lands. Each bead is implemented once and closed once at the remote tip, and
// no conflict marker reaches the base. The agent is test/pr/pr-agent.pl.
import {existsSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {startCli} from '../support/cli.js'
import {GIT_ISOLATION} from '../support/git.js'
import {waitFor} from '../support/wait.js'
import {BIN, tipBeads} from './fleet-harness.js'
import {agentCalls, bead, g, makeFleet, otherHostLands, remoteRefs} from './helpers.js'

const AGENT = path.resolve(import.meta.dirname, '..', 'pr', 'pr-agent.pl')
const MARKER = /^(<<<<<<< |=======|>>>>>>> )/m
// the team's check: hx-2's work needs fix.txt beside it (only its resolve writes it)
const CHECK = 'if [ "$HELIX_BEAD_ID" = hx-2 ] && [ ! -e fix.txt ]; then echo "fix.txt is missing"; exit 1; fi; echo "ok on $HELIX_LAND_BASE"'

type Call = {action: string; bead: string; env_action: string | null; log: string | null; tracker: string | null}
const calls = (log: string) => agentCalls<Call>(log)

describe('helix run --remote: conflicts and red checks go back to the agent (SPEC 20.4)', () => {
  it('a conflict with a base moved by hand and a red land check are each resolved by the same agent and land once', async () => {
    const f = makeFleet([bead('hx-1'), bead('hx-2')], {'shared.txt': 'start\n'})
    const log = path.join(f.dir, 'agent.jsonl')
    const gate = path.join(f.dir, 'gate')
    const c = startCli(['run', '--remote', 'origin', '--agent', AGENT, '--no-auto-review', '--review-every', '0', '--summary', '--lease', '30', '--land-check', CHECK], {
      cwd: f.clone('host-a'),
      env: {...GIT_ISOLATION, HELIX_HOST: 'host-a', PR_AGENT_LOG: log, FLEET_HELIX: BIN, PR_AGENT_GATE: gate, PR_AGENT_GATE_BEAD: 'hx-1'},
      detached: true,
      stdin: 'ignore',
    })
    // hx-1's agent is at work in a worktree from the tip: another host lands a change of the same line
    await waitFor(() => existsSync(`${gate}.waiting`), {timeoutMs: 60_000, what: `hx-1's agent at work\n${c.output}`})
    otherHostLands(f)
    writeFileSync(gate, '')
    const r = await c.done
    const out = c.output
    expect(r.code, out).toBe(0)
    const all = calls(log)
    for (const id of ['hx-1', 'hx-2']) expect(all.filter((x) => x.action === 'implementation' && x.bead === id), `${id} implemented once\n${out}`).toHaveLength(1)
    // each resolve was the same agent with HELIX_ACTION=resolve, in a worktree whose tracker copy still carries the close
    const resolves = all.filter((x) => x.action === 'resolve')
    expect(resolves.map((x) => [x.bead, x.env_action, x.tracker])).toEqual(
      expect.arrayContaining([
        ['hx-1', 'resolve', 'closed'],
        ['hx-2', 'resolve', 'closed'],
      ]),
    )
    expect(resolves).toHaveLength(2)
    expect(resolves.find((x) => x.bead === 'hx-2')?.log).toBe('fix.txt is missing')
    expect(out).toMatch(/cycle \d+: hx-1 CONFLICT in 1 file\(s\) → resolve \([^)]*pr-agent\.pl\)/)
    expect(out).toMatch(/cycle \d+: hx-2 land check FAILED \(rc=1, \d+s\): fix\.txt is missing/)
    expect(out).toMatch(/cycle \d+: hx-2 land check failed → resolve \(/)
    expect(out.match(/cycle \d+: resolved, landed hx-[12] \(\d+ commits?, [0-9a-f]{12}\)/g)).toHaveLength(2)
    // the remote base: both closed once, both sides of the line kept, no marker, the fix beside hx-2's work
    const beads = tipBeads(f.bare)
    expect(beads.map((b) => [b.id, b.status])).toEqual([
      ['hx-1', 'closed'],
      ['hx-2', 'closed'],
    ])
    expect(beads.every((b) => !Object.keys(b).some((k) => k.startsWith('claim')))).toBe(true)
    expect(g(f.bare, 'show', 'main:fix.txt')).toBe('the check passes now')
    const subjects = g(f.bare, 'log', '--format=%s', 'main').split('\n')
    for (const id of ['hx-1', 'hx-2']) expect(subjects.filter((s) => s === `work on ${id}`)).toHaveLength(1)
    // hx-1's landed work kept both sides of the line; no commit of the base ever held a marker
    expect(g(f.bare, 'show', 'main^{/^work on hx-1}:shared.txt').split('\n').sort()).toEqual(['hx-1', 'other'])
    for (const sha of g(f.bare, 'rev-list', 'main').split('\n')) expect(g(f.bare, 'show', `${sha}:shared.txt`), sha).not.toMatch(MARKER)
    expect(remoteRefs(f.bare).filter((x) => !x.startsWith('refs/helix/runs/'))).toEqual([])
  }, 120_000)
})
