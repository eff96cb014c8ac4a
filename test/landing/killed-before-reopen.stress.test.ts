// SPEC 18.1a across a crash (session 35's kill soak): an attempt that does not land keeps
// its work on a preserved ref, removes its worktree and branch, and only then reopens its
// bead. A `git` shim first on PATH kill -9s helix (its parent) right after the branch's
// deletion, the last trace a restart finds an attempt by: before, the bead stayed closed
// with its work off the base for ever (doctor and the restart saw nothing). Now the reopen
// is recorded as owed before the cleanup; doctor lists it and the restart reopens the bead
// and does it again. The kill is the point, so the first run is the built CLI; the rest runs
// in-process. Stress-only (~2.5 s); npm test's guard is landing.test.ts's beforeRemove order.
import {describe, expect, it} from 'vitest'
import {STRESS_FULL} from '../support/stress.js'
import {killingGit} from '../support/git-shim.js'
import {g, helixIn, landedCount, project, runIn, start} from './crash-helpers.js'

const itFull = STRESS_FULL ? it : it.skip

describe('helix killed between the cleanup of an attempt that did not land and its reopen', () => {
  itFull('the restart reopens the bead (owed) and does it again; doctor lists the owed reopen', async () => {
    const p = project(['hx-1'])
    // the first attempt's candidate is red, the second's green; no resolve round
    const more = ['--no-auto-review', '--resolve-attempts', '0', '--land-check', 'test "$HELIX_ATTEMPT" != 1']
    const shim = killingGit({match: '*" update-ref -d refs/heads/helix/"*', after: true})
    const first = start({...p, env: {...p.env, PATH: shim.path()}}, 2, more)
    const res = await first.done
    expect(shim.fired(), first.output()).toBe(1)
    expect(res.signal, first.output()).toBe('SIGKILL')
    // what the kill left: the bead closed, its work on a preserved ref only, no worktree, no branch
    expect(p.tracked().get('hx-1')?.status).toBe('closed')
    expect(g(p.root, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/', 'refs/helix/preserved/')).toBe('refs/helix/preserved/hx-1/1')
    expect(landedCount(p.root, 'hx-1')).toBe(0)

    const doc = await helixIn(p, ['doctor'])
    expect(doc.out).toMatch(/not landed: closed bead hx-1 owes a reopen since .*NOT LANDED \[.*\]: land check failed.*; work kept at refs\/helix\/preserved\/hx-1\/1/)

    const again = await runIn(p, 2, more)
    expect(again.code, again.out).toBe(0)
    expect(again.out).toMatch(/helix: reopened hx-1 \(owed since /)
    const b = p.tracked().get('hx-1')
    expect(b?.status, again.out).toBe('closed')
    expect(JSON.stringify(b?.notes ?? '')).toMatch(/NOT LANDED \[.*\]: land check failed.*; work kept at refs\/helix\/preserved\/hx-1\/1/)
    // done again and landed once; the first attempt's red work stays off the base
    expect(p.calls().filter((c) => c.phase === 'start')).toHaveLength(2)
    expect(landedCount(p.root, 'hx-1')).toBe(1)
    expect(g(p.root, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
    // paid: nothing owed any more
    expect((await helixIn(p, ['doctor'])).out).not.toMatch(/owes a reopen/)
  })
})
