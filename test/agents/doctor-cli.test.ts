import path from 'node:path'
import {rmSync} from 'node:fs'
import {afterEach, describe, expect, it} from 'vitest'
import {stubProject, type StubEnv} from './helpers.js'
import {helixInProcess} from '../support/in-process.js'

// helix doctor's agent probes (SPEC 14.6) as it prints them, in-process
// (test/support/in-process.ts); the probes themselves start the stub agents.

const projects: StubEnv[] = []
afterEach(() => {
  for (const p of projects.splice(0)) rmSync(path.dirname(p.root), {recursive: true, force: true})
})

describe('helix doctor prints the probes (in-process)', () => {
  it('claude selected: FAIL refusing as root with the fix, or its version line when not root / IS_SANDBOX=1', async () => {
    const p = stubProject()
    projects.push(p)
    expect((await helixInProcess(p.root, ['tracker', 'init'], p.env)).code).toBe(0)
    const run = (extra: NodeJS.ProcessEnv) => helixInProcess(p.root, ['doctor'], {...p.env, HELIX_AGENT: 'claude', ...extra})
    const asIs = await run({IS_SANDBOX: ''})
    if (process.getuid?.() === 0) {
      expect(asIs.code).toBe(1)
      expect(asIs.stdout).toContain('FAIL  implementation agent claude refusing: 0.0.0 (Claude Code stub) would refuse to run: --dangerously-skip-permissions cannot be used as root')
      expect(asIs.stdout).toContain('      fix: run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust')
    }
    const ok = await run({IS_SANDBOX: '1'})
    expect(ok.stdout).toMatch(/^ok {4}implementation agent claude version: 0\.0\.0 \(Claude Code stub\) \(/m)
    expect(ok.stdout).toMatch(/^ok {4}agent codex version: codex-cli 0\.0\.0-stub/m)
  })
})
