// SPEC 20.3 on `--remote` landings and SPEC 5.10 in a landing's race loop, through the
// built CLI (npm run build first): a bare remote and host clones. Two hosts landing with
// checks are remote-run.e2e.test.ts's drain (one run for both).
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {bead, g, makeFleet, refuseEveryLanding, remoteRefs} from './helpers.js'
import {events, startHost, tipBeads, until} from './fleet-harness.js'

const lines = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [])

describe('helix run --remote: stops and land checks in the landing', () => {
  it('SIGTERM while a landing keeps losing races: exit 143 promptly, the work pushed to a preserved ref, the claim released, the bead open', async () => {
    const f = makeFleet([bead('hx-1')])
    const losses = path.join(f.dir, 'losses.log')
    refuseEveryLanding(f.bare, 'error: failed to update ref: non-fast-forward', losses)
    const dir = f.clone('host-a')
    const log = path.join(f.dir, 'agents.jsonl')
    const h = startHost(dir, 'host-a', log, ['--lease', '30'], {FLEET_SLEEP_MS: '50'})
    // the landing has lost a few rounds: it is in its race loop
    await until(() => lines(losses).length >= 3, 60_000, 'three lost landing pushes')
    const t0 = Date.now()
    h.child.kill('SIGTERM')
    expect(await h.done, h.out()).toBe(143)
    // SPEC 5.10: within 15 s (generous here: the stop itself is a few git calls)
    expect(Date.now() - t0).toBeLessThan(15_000)
    expect(events(log).filter((e) => e.event === 'end')).toHaveLength(1)
    expect(h.out()).toMatch(/interrupted \(SIGTERM\)/)
    // the work is kept on the remote, the claim is gone, the base never moved for it
    // refs/helix/runs/<host>: the run's records, pushed when a --remote run ends (the fleet report)
    expect(remoteRefs(f.bare).filter((r) => !r.startsWith('refs/helix/runs/'))).toEqual(['refs/helix/preserved/hx-1/1'])
    expect(g(f.bare, 'log', '--format=%s', 'refs/helix/preserved/hx-1/1', '-1')).toBe('work on hx-1')
    expect(g(f.bare, 'log', '--format=%s', 'main')).not.toContain('work on hx-1')
    // a stop is not the bead's failure: reopened with its NOT LANDED note, no attempt counted
    const [b] = tipBeads(f.bare)
    expect(b?.status).toBe('open')
    expect(String(b?.notes ?? '')).toMatch(/NOT LANDED \[[^\]]+\]: interrupted; work kept at refs\/helix\/preserved\/hx-1\/1/)
    expect(b?.['helix-attempts']).toBeUndefined()
    expect(g(dir, 'worktree', 'list').split('\n')).toHaveLength(1)
  }, 120_000)

  it('a check that fails only on the rebased candidate never reaches the remote base', async () => {
    const f = makeFleet([bead('hx-1')])
    const dir = f.clone('host-a')
    const other = f.clone('other')
    const mark = path.join(f.dir, 'checked-once')
    // first run: passes, and meanwhile another host lands poison.txt on main; on the rebased candidate it fails
    const check = [
      'if [ -e poison.txt ]; then echo "poison.txt is on the base $HELIX_LAND_BASE"; exit 1; fi',
      `if [ ! -e '${mark}' ]; then touch '${mark}'; cd '${other}' && echo x > poison.txt && git add poison.txt && git commit -qm poison && git push -q origin main; fi`,
      'echo "ok for $HELIX_BEAD_ID attempt $HELIX_ATTEMPT"',
    ].join('\n')
    const log = path.join(f.dir, 'agents.jsonl')
    // --resolve-attempts 0: no resolve round (SPEC 20.4's rounds on a remote landing: resolve.e2e.test.ts)
    const h = startHost(dir, 'host-a', log, ['--lease', '30', '--land-check', check, '--resolve-attempts', '0'], {FLEET_SLEEP_MS: '50'})
    // the bead would be tried again (and fail again on the poisoned base): stop after the first landing
    await until(() => /land check FAILED/.test(h.out()) && remoteRefs(f.bare).includes('refs/helix/preserved/hx-1/1'), 60_000, 'the first attempt not landed')
    h.child.kill('SIGTERM')
    expect(await h.done, h.out()).toBe(143)
    const out = h.out()
    expect(out).not.toContain('land unchecked')
    expect(out).toMatch(/cycle 1: hx-1 land check passed \(\d+s\)/)
    expect(out).toMatch(/cycle 1: hx-1 land check FAILED \(rc=1, \d+s\): poison\.txt is on the base [0-9a-f]{40} — log L\d+–L\d+/)
    // the base is the poison commit and what came after it for the bookkeeping; never the attempt's work
    const subjects = g(f.bare, 'log', '--format=%s', 'main').split('\n')
    expect(subjects).toContain('poison')
    expect(subjects).not.toContain('work on hx-1')
    const [b] = tipBeads(f.bare)
    expect(b?.status).toBe('open')
    expect(String(b?.notes ?? '')).toMatch(/NOT LANDED \[[^\]]+\]: land check failed \(rc=1\); work kept at refs\/helix\/preserved\/hx-1\/1/)
    expect(remoteRefs(f.bare).filter((r) => !r.startsWith('refs/helix/preserved/') && !r.startsWith('refs/helix/runs/'))).toEqual([])
    expect(g(f.bare, 'log', '--format=%s', 'refs/helix/preserved/hx-1/1', '-1')).toBe('work on hx-1')
  }, 120_000)
})
