// Pull requests merged or closed by a person after `helix run --land pr` stopped (SPEC 20.5):
// `helix status --remote` shows what became of them at once (the base tip says a bead closed:
// the look the run cached is not reused for it), and a later run clears them.
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'
import {events, startHost, tipBeads} from '../remote/fleet-harness.js'
import {bead, g, protectedForge} from './helpers.js'

const PR = ['--land', 'pr', '--pr-poll', '1', '--pr-wait', '0']

describe('pull requests settled while helix is stopped (built CLI)', () => {
  it('merged by squash and closed with a comment after the run: status --remote says so at once, a later run clears both and redoes only the closed one', async () => {
    const f = protectedForge([bead('hx-1'), bead('hx-2')])
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('host-a')
    const first = startHost(dir, 'host-a', log, PR, {...f.env, FLEET_SLEEP_MS: '50'})
    expect(await first.done, first.out()).toBe(0)
    expect(first.out()).toMatch(/2 awaiting merge/)
    // its own claims, just given their pull requests, are not waited for as if something backed off
    expect(first.out()).not.toMatch(/backing-off|waiting \d+s/)
    expect(f.gh('forge', 'merge', '1', '--squash').code).toBe(0)
    expect(f.gh('forge', 'close', '2', 'wrong approach').code).toBe(0)
    // within the minute the run's last look is cached for: the merged one is not shown as awaiting merge
    const st = await helixInProcess(dir, ['status', '--remote', 'origin', '--json'], {...GIT_ISOLATION, ...f.env})
    expect(st.code, st.stderr).toBe(0)
    const prs = (JSON.parse(st.stdout) as {pull_requests: Array<{bead: string; state: string}>}).pull_requests
    // hx-1: its close on the base tip makes status ask the forge again; hx-2's close shows nowhere but
    // on the forge, so the run's look of it, when it had one, is reused within its minute (open), else
    // the forge is asked (closed) (docs/pr-landing.md, Status)
    expect(prs.map((p) => p.bead)).toEqual(['hx-1', 'hx-2'])
    expect(prs[0]?.state).toBe('merged')
    expect(['open', 'closed']).toContain(prs[1]?.state)
    const awaiting = prs.filter((p) => p.state === 'open').length
    const text = await helixInProcess(dir, ['status', '--remote', 'origin'], {...GIT_ISOLATION, ...f.env})
    expect(text.stdout).toMatch(new RegExp(`pull requests: 2 \\(${awaiting} awaiting merge; the others are cleared at the next --land pr run's look\\)\\n {2}hx-1 https://forge\\.test/team/repo/pull/1 \\([^)]*, merged\\)`))
    const later = startHost(dir, 'host-a', log, [...PR, '--max-cycles', '1'], {...f.env, FLEET_SLEEP_MS: '50'})
    expect(await later.done, later.out()).toBe(0)
    expect(later.out()).toMatch(/merged hx-1 \(https:\/\/forge\.test\/team\/repo\/pull\/1/)
    expect(later.out()).toMatch(/pull request for hx-2 closed without merge: "wrong approach"; hx-2 is free again/)
    // hx-1 closed on the base once, not run again; hx-2 ran again (the person closed it)
    expect(tipBeads(f.bare).filter((b) => b.id === 'hx-1').map((b) => b.status)).toEqual(['closed'])
    expect(events(log).filter((e) => e.event === 'start').map((e) => e.bead)).toEqual(['hx-1', 'hx-2', 'hx-2'])
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('refs/helix/claims/hx-2')
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('refs/heads/helix/hx-2')
    expect(f.pushes().filter((p) => !p.forge).map((p) => p.ref).filter((r) => !/^refs\/heads\/helix\/|^refs\/helix\//.test(r))).toEqual([])
  }, 300_000)

  it('a forge that says merged while the base does not have the close (a wrong answer): the claim and the branch stay, the bead is not redone, a person is told', async () => {
    const f = protectedForge([bead('hx-1')])
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('host-a')
    const first = startHost(dir, 'host-a', log, PR, {...f.env, FLEET_SLEEP_MS: '50'})
    expect(await first.done, first.out()).toBe(0)
    const mainBefore = g(f.bare, 'rev-parse', 'main')
    const branch = g(f.bare, 'rev-parse', 'helix/hx-1')
    // the forge's word only: nothing merged into main
    const state = JSON.parse(readFileSync(f.state, 'utf8')) as {prs: Array<Record<string, unknown>>}
    Object.assign(state.prs[0] as object, {state: 'MERGED', mergedAt: '2026-11-27T00:00:00Z'})
    writeFileSync(f.state, JSON.stringify(state))
    const later = startHost(dir, 'host-a', log, PR, {...f.env, FLEET_SLEEP_MS: '50'})
    expect(await later.done, later.out()).toBe(0)
    expect(later.out()).toMatch(/hx-1: gh says https:\/\/forge\.test\/team\/repo\/pull\/1 merged, but hx-1 is not closed on main; its work stays on helix\/hx-1 \(to free the bead: git push origin :refs\/helix\/claims\/hx-1\); the pull request stays for a person/)
    expect(later.out()).not.toMatch(/merged hx-1/)
    expect(events(log).filter((e) => e.event === 'start')).toHaveLength(1)
    expect(g(f.bare, 'rev-parse', 'helix/hx-1')).toBe(branch)
    expect(g(f.bare, 'rev-parse', 'main')).toBe(mainBefore)
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/')).toBe('refs/helix/claims/hx-1')
    expect(tipBeads(f.bare).find((b) => b.id === 'hx-1')?.status).toBe('open')
  }, 300_000)
})
