// SPEC 20.3 on a `--remote` landing against a land check that commits (session 34's
// adversary), through the built CLI (npm run build first): the check's commit is
// never pushed to the base, and the landing does not check the moved candidate
// again and again for ever (it did: each check made a new HEAD, so "checked" never
// matched). The attempt is not landed with the reason and the fix in one line.
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {bead, g, makeFleet} from './helpers.js'
import {startHost, tipBeads, until} from './fleet-harness.js'

describe('helix run --remote: a land check that commits', () => {
  it('is not landed for that reason, in words; nothing of it reaches the base; the work is kept', async () => {
    const f = makeFleet([bead('hx-1')])
    const dir = f.clone('host-a')
    const runs = path.join(f.dir, 'check-runs')
    const check = `echo run >> '${runs}'; date +%s%N > gen.txt && git add gen.txt && git -c user.name=check -c user.email=c@c commit -q -m 'made by the check'`
    const log = path.join(f.dir, 'agents.jsonl')
    const h = startHost(dir, 'host-a', log, ['--lease', '30', '--land-check', check, '--resolve-attempts', '0'], {FLEET_SLEEP_MS: '50'})
    try {
      await until(() => /NOT LANDED/.test(h.out()), 90_000, 'the first attempt not landed')
    } finally {
      h.child.kill('SIGTERM')
    }
    await h.done
    const out = h.out()
    expect(out).toMatch(/hx-1 → NOT LANDED \(the land check moved HEAD; fix the check so it never commits, resets or switches branches \(helix\/hx-1-1 /)
    const subjects = g(f.bare, 'log', '--format=%s', 'main').split('\n')
    expect(subjects).not.toContain('made by the check')
    expect(subjects).not.toContain('work on hx-1')
    expect(g(f.bare, 'log', '--format=%s', 'refs/helix/preserved/hx-1/1')).toContain('work on hx-1')
    const [b] = tipBeads(f.bare)
    expect(b?.status).toBe('open')
    expect(String(b?.notes ?? '')).toMatch(/NOT LANDED \[[^\]]+\]: the land check moved HEAD; fix the check/)
  }, 150_000)
})
