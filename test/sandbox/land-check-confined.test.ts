// SPEC 20.3 with --sandbox: the land check runs the agent's code, so it runs confined like
// the agent: its worktree is writable, a write anywhere else fails or stays in the sandbox.
import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {runLandCheck} from '../../src/landing/land-check.js'
import {checkConfine} from '../../src/app/sandbox-wiring.js'
import type {SandboxAttempts} from '../../src/landing/sandbox-attempts.js'
import {DEFAULT_SANDBOX, probeSandbox} from '../../src/proc/sandbox.js'
import {makeTempDir} from '../support/tmp.js'

const works = probeSandbox().ok

describe.skipIf(!works)('land check under --sandbox', () => {
  it('writes in its worktree; a write outside it has no effect, and the same check unconfined escapes', async () => {
    const dir = makeTempDir('helix-check-box-')
    const wt = path.join(dir, 'worktree')
    const outside = path.join(dir, 'outside.txt')
    mkdirSync(wt)
    const command = `echo inside > in.txt && echo escaped > '${outside}'`
    const spec = {command, timeoutSec: 60, stallSec: 0, env: {PATH: process.env.PATH, HOME: process.env.HOME}, graceMs: 200}
    const confine = checkConfine(DEFAULT_SANDBOX, {readable: () => []} as unknown as SandboxAttempts)
    const boxed = await runLandCheck({...spec, confine}, wt, {HELIX_BEAD_ID: 'hx-1'})
    // under /tmp the sandbox's private /tmp takes the write (elsewhere it is a read-only file system): no effect outside either way
    expect(boxed.ended).toBeUndefined()
    expect(readFileSync(path.join(wt, 'in.txt'), 'utf8')).toBe('inside\n')
    expect(existsSync(outside)).toBe(false)
    // the test can fail: without the sandbox the same check escapes
    const free = await runLandCheck(spec, wt, {HELIX_BEAD_ID: 'hx-1'})
    expect(free.rc).toBe(0)
    expect(readFileSync(outside, 'utf8')).toBe('escaped\n')
  })
})
