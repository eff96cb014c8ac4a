import path from 'node:path'
import {rmSync} from 'node:fs'
import {afterEach, describe, expect, it} from 'vitest'
import {stubProject, type StubEnv} from './helpers.js'
import {runCli} from '../support/cli.js'

// helix doctor's agent probes (SPEC 14.6) through the BUILT cli (npm run build first).

const projects: StubEnv[] = []
afterEach(() => {
  for (const p of projects.splice(0)) rmSync(path.dirname(p.root), {recursive: true, force: true})
})

describe('helix doctor prints the probes (built CLI)', () => {
  it('claude selected: FAIL refusing as root with the fix, or its version line when not root / IS_SANDBOX=1', () => {
    const p = stubProject()
    projects.push(p)
    runCli(['tracker', 'init'], {cwd: p.root, env: p.env})
    const run = (extra: NodeJS.ProcessEnv) => runCli(['doctor'], {cwd: p.root, env: {...p.env, HELIX_AGENT: 'claude', ...extra}})
    const asIs = run({IS_SANDBOX: ''})
    if (process.getuid?.() === 0) {
      expect(asIs.code).toBe(1)
      expect(asIs.stdout).toContain('FAIL  implementation agent claude refusing: 0.0.0 (Claude Code stub) would refuse to run: --dangerously-skip-permissions cannot be used as root')
      expect(asIs.stdout).toContain('      fix: run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust')
    }
    const ok = run({IS_SANDBOX: '1'})
    expect(ok.stdout).toMatch(/^ok {4}implementation agent claude version: 0\.0\.0 \(Claude Code stub\) \(/m)
    expect(ok.stdout).toMatch(/^ok {4}agent codex version: codex-cli 0\.0\.0-stub/m)
  })
})
