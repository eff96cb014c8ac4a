// SPEC 21.2: a sandbox that cannot start is refused before anything is claimed, and doctor
// says so where the project asks for the sandbox. In-process (test/support/in-process.ts):
// the refusal's line, its exit code and what is left on disk; control.e2e.test.ts keeps
// the sandboxed runs' processes.
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {helixInProcess} from '../support/in-process.js'
import {helixProject} from '../support/project.js'

// the commands' module graph is transformed before any test's clock starts (minutes at load 30)
beforeAll(async () => {
  await import('../../src/commands/run.js')
  await import('../../src/cli/run-loop.js')
  await import('../../src/app/sandbox-wiring.js')
  await import('../../src/commands/doctor.js')
}, 300_000)

describe('helix run --sandbox: refusals', () => {
  it('refuses where bubblewrap is missing: one line naming the package, exit 1, nothing claimed', async () => {
    await using p = await helixProject({beads: [{id: 'sc-1', title: 'hang'}], git: true, commitAll: true})
    const before = readFileSync(p.tracker, 'utf8')
    const env = {HOME: p.base, HELIX_AGENT: 'true', HELIX_BACKOFF_SLEEP: '0', HELIX_BWRAP: '/nonexistent/bwrap'}
    const r = await helixInProcess(p.root, ['run', '--sandbox'], env)
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/^helix: --sandbox needs bubblewrap .*apt-get install bubblewrap/)
    expect(readFileSync(p.tracker, 'utf8')).toBe(before)
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    // doctor says so too: a FAIL when the project asks for the sandbox
    const d = await helixInProcess(p.root, ['doctor'], {...env, HELIX_SANDBOX: '1'})
    expect(d.code).toBe(1)
    expect(d.stdout).toMatch(/^FAIL {2}sandbox: --sandbox needs bubblewrap/m)
  }, 120_000)
})
