// `helix run --remote` refusing bad input (SPEC 19.1), in-process (test/support/in-process.ts):
// one line naming the flag, exit 1, nothing claimed on the remote, nothing changed in the
// checkout. The exit code as a shell sees it is the e2e files' (remote-run, land-check).
import {rmSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'
import {bead, g, makeFleet, remoteRefs} from './helpers.js'

// the commands' module graph is transformed before any test's clock starts (minutes at load 30)
beforeAll(async () => {
  await import('../../src/commands/run.js')
  await import('../../src/cli/run-loop.js')
  await import('../../src/app/remote-wiring.js')
}, 300_000)

describe('helix run --remote: bad input', () => {
  it('one line naming the flag, exit 1, nothing changed', async () => {
    const f = makeFleet([bead('hx-1')])
    const dir = f.clone('h')
    const run = (...args: string[]) => helixInProcess(dir, ['run', ...args], GIT_ISOLATION)
    const a = await run('--remote', 'origin', '--lease', 'soon')
    expect(a.code).toBe(1)
    expect(a.stderr.trim()).toBe("helix: invalid --lease 'soon': expected seconds, a whole number ≥ 3")
    const b = await run('--remote', 'upstream')
    expect(b.code).toBe(1)
    expect(b.stderr.trim()).toMatch(/^helix run: --remote upstream: no such git remote here/)
    const c = await run('--lease', '10')
    expect(c.code).toBe(1)
    expect(c.stderr).toContain('--lease and --max-offline need --remote <name>')
    expect(remoteRefs(f.bare)).toEqual([])
    expect(g(dir, 'status', '--porcelain')).toBe('')
  }, 120_000)

  it('a remote away at the start is said so in one line quoting git (not "or no branch"): nothing claimed', async () => {
    const f = makeFleet([bead('hx-1')])
    const dir = f.clone('h')
    const link = path.join(f.dir, 'link.git')
    symlinkSync(f.bare, link)
    g(dir, 'remote', 'set-url', 'origin', link)
    rmSync(link)
    const away = await helixInProcess(dir, ['run', '--remote', 'origin'], GIT_ISOLATION)
    expect(away.code).toBe(1)
    expect(away.stderr.trim().split('\n').at(-1)).toMatch(/^helix run: the remote origin is unreachable \(git: .*does not appear to be a git repository.*\); nothing was claimed: run again when it answers$/)
    expect(remoteRefs(f.bare)).toEqual([])
    expect(g(dir, 'status', '--porcelain')).toBe('')
  }, 120_000)
})
