// `helix agent check` in-process (issue 30): what the command prints and refuses for agents
// that never call helix (a review-only check, a failing action, a bare name). The agents
// that close a bead through the built CLI, and one check through the binary, are in
// agent-check.e2e.test.ts.
import {chmodSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess} from '../support/in-process.js'
import {tempDir} from './helpers.js'
import {noReviewAgent} from './no-review-agent.js'

describe('helix agent check, in-process', () => {
  it('--action review checks just that action', async () => {
    const dir = tempDir()
    const r = await helixInProcess(dir, ['agent', 'check', noReviewAgent(dir), '--action', 'review'])
    expect(r.code).toBe(1)
    expect(r.stdout.trim().split('\n')).toHaveLength(3)
    expect(r.stdout).toMatch(/^ {2}review +MISSING +rc=0 — needs REVIEW_STATUS: CLEAN\|ISSUES_FOUND/m)
    expect(await helixInProcess(dir, ['agent', 'check', noReviewAgent(dir), '--action', 'reveiw'])).toMatchObject({code: 1, stdout: ''})
  }, 30_000)

  it("--verbose shows each action's stdout and stderr under its line, sanitized (SPEC 22.2)", async () => {
    const dir = tempDir()
    const file = path.join(dir, 'failing.sh')
    writeFileSync(file, ['#!/usr/bin/env bash', 'cat >/dev/null', 'echo "npm test: 3 failing"', 'printf \'boom on stderr\\033[2J\\n\' >&2', 'exit 1', ''].join('\n'))
    chmodSync(file, 0o755)
    const r = await helixInProcess(dir, ['agent', 'check', file, '--action', 'implementation', '--verbose'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^ {2}implementation +MISSING +rc=1, bead in_progress — needs exit 0\n {6}\| npm test: 3 failing\n {6}\| boom on stderr\?\[2J\n/m)
    expect(r.stdout).not.toContain('\u001b')
    // without --verbose the output stays out
    expect((await helixInProcess(dir, ['agent', 'check', file, '--action', 'implementation'])).stdout).not.toContain('npm test: 3 failing')
  }, 30_000)

  it("a bare name that is a file here, not on PATH, hints './agent.sh'", async () => {
    const dir = tempDir()
    noReviewAgent(dir)
    const r = await helixInProcess(dir, ['agent', 'check', 'agent.sh'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("helix: agent 'agent.sh' not found on PATH (did you mean './agent.sh'?)\n")
  })
})
