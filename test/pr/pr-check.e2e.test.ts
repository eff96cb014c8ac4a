// SPEC 20.3 with `--land pr`: the land check runs on the rebased branch before the pull
// request opens (built CLI, protected bare remote, the gh stand-in of test/pr/helpers.ts).
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {startHost, tipBeads} from '../remote/fleet-harness.js'
import {GIT_POLL_MS, waitFor} from '../support/wait.js'
import {bead, g, protectedForge} from './helpers.js'

describe('helix run --land pr --land-check', () => {
  it('a red check opens no pull request (the work is preserved); a green one opens it and says so in its body', async () => {
    const f = protectedForge([bead('hx-1'), bead('hx-2')])
    const log = path.join(f.dir, 'agents.jsonl')
    const dir = f.clone('host-a')
    const check = '[ "$HELIX_BEAD_ID" != hx-2 ] || { echo "hx-2 breaks the build on $HELIX_LAND_BASE"; exit 1; }; echo green'
    const h = startHost(dir, 'host-a', log, ['--land', 'pr', '--pr-poll', '4', '--land-check', check], {...f.env, FLEET_SLEEP_MS: '50'})
    // hx-2 would be tried again (and fail again): stop once it failed its first check
    await waitFor(() => f.prs().length > 0 && /land check FAILED/.test(h.out()) && g(f.bare, 'for-each-ref', 'refs/helix/preserved/hx-2/') !== '', {timeoutMs: 60_000, intervalMs: GIT_POLL_MS, what: 'a pull request and a red check'}).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${h.out()}`)
    })
    h.child.kill('SIGTERM')
    expect(await h.done, h.out()).toBe(143)
    const out = h.out()
    expect(out).toMatch(/hx-2 land check FAILED \(rc=1, \d+s\): hx-2 breaks the build on [0-9a-f]{40}/)
    expect(out).toMatch(/hx-1 land check passed \(\d+s\)/)
    const prs = f.prs()
    expect(prs.map((p) => p.head)).toEqual(['helix/hx-1'])
    expect(prs[0]?.body).toMatch(/## Land check\n\nhelix's land check passed on this branch rebased onto `[0-9a-f]{12}`/)
    // hx-2's work went nowhere but its preserved ref; no branch of it was pushed
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('refs/heads/helix/hx-1')
    expect(g(f.bare, 'log', '--format=%s', '-1', 'refs/helix/preserved/hx-2/1')).toBe('work on hx-2')
    expect(tipBeads(f.bare).map((b) => b.status)).toEqual(['open', 'open'])
  }, 120_000)
})
