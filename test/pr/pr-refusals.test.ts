// `helix run --land pr` refusing before anything is claimed (SPEC 20.5), in-process
// (test/support/in-process.ts): gh missing or logged out is one line and exit 4; --land pr
// without --remote is bad input, exit 1. A protected bare remote and the gh stand-in of
// test/pr/helpers.ts.
import {mkdirSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {spawnSync} from 'node:child_process'
import {beforeAll, describe, expect, it} from 'vitest'
import {GIT_ISOLATION} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'
import {makeTempDir} from '../support/tmp.js'
import {bead, g, protectedForge} from './helpers.js'

// the commands' module graph is transformed before any test's clock starts (minutes at load 30)
beforeAll(async () => {
  await import('../../src/commands/run.js')
  await import('../../src/cli/run-loop.js')
  await import('../../src/app/remote-wiring.js')
}, 300_000)

describe('helix run --land pr: refusals', () => {
  it('gh missing, or gh auth status failing: one line, exit 4, nothing claimed', async () => {
    const f = protectedForge([bead('hx-1')])
    const dir = f.clone('host-a')
    // a PATH with git and nothing else: no gh anywhere
    const bin = path.join(makeTempDir('helix-nogh-'), 'bin')
    mkdirSync(bin)
    symlinkSync(spawnSync('sh', ['-c', 'command -v git'], {encoding: 'utf8'}).stdout.trim(), path.join(bin, 'git'))
    const run = (args: string[], env: NodeJS.ProcessEnv) => helixInProcess(dir, ['run', ...args], {...GIT_ISOLATION, ...env})
    const pr = ['--remote', 'origin', '--land', 'pr', '--agent', 'true', '--no-auto-review']
    const missing = await run(pr, {PATH: bin})
    expect(missing.code, missing.stderr).toBe(4)
    expect(missing.stderr.trim()).toBe("helix: helix run --land pr: GitHub's CLI 'gh' is not installed (install gh, then log in with 'gh auth login')")
    const out = await run(pr, {...f.env, FORGE_LOGGED_OUT: '1'})
    expect(out.code, out.stderr).toBe(4)
    expect(out.stderr.trim()).toMatch(/^helix: helix run --land pr: 'gh auth status' failed \(You are not logged into any GitHub hosts\. .*\): log in with 'gh auth login'$/)
    expect(g(f.bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/')).toBe('')
    // --land pr without --remote is bad input
    const noRemote = await run(['--land', 'pr'], {...f.env})
    expect(noRemote.code).toBe(1)
    expect(noRemote.stderr.trim()).toMatch(/^helix: --land pr needs --remote <name>/)
  }, 120_000)
})
