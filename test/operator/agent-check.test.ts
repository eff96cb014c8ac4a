// `helix agent check` (docs/agent-protocol.md): the shipped minimal agents answer every
// action; an agent that cannot review is caught, by `agent check`, by doctor and by run's
// preflight, before a night's run reaches its first review. `agent check` and doctor run
// in-process (test/support/in-process.ts); the agents they start are processes as ever.
// The runs' preflight and the shipped agents' check (their many `helix` calls take the
// fast path only below a CLI started with NODE_ENV=production): agent-check.e2e.test.ts.
import {chmodSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {project, REPO, tempDir} from './helpers.js'

const AGENTS = path.join(REPO, 'fixtures', 'agents')

/** The README's kind of hand-written agent: implementation and check, no review. */
function noReviewAgent(dir: string): string {
  const file = path.join(dir, 'agent.sh')
  writeFileSync(
    file,
    [
      '#!/usr/bin/env bash',
      'cat >/dev/null',
      'case "$HELIX_ACTION" in',
      '  implementation) helix tracker close "$HELIX_BEAD_ID" ;;',
      '  check) echo "NEXT_ACTION: STOP" ;;',
      '  *) echo "done" ;;',
      'esac',
      '',
    ].join('\n'),
  )
  chmodSync(file, 0o755)
  return file
}

describe('helix agent check', () => {
  it('an agent lacking review: one MISSING line naming REVIEW_STATUS, exit 1', async () => {
    const dir = tempDir()
    const r = await helix(dir, ['agent', 'check', noReviewAgent(dir)])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^ {2}review +MISSING +rc=0 — needs REVIEW_STATUS: CLEAN\|ISSUES_FOUND/m)
    expect(r.stdout).toMatch(/^ {2}implementation +ok /m)
    expect(r.stdout).toMatch(/^ {2}check +ok +rc=0, NEXT_ACTION: STOP/m)
    expect(r.stdout).toMatch(/^ {2}backfill +MISSING /m)
    // SPEC 20.4: an agent that ignores the resolve action leaves the rebase stopped
    expect(r.stdout).toMatch(/^ {2}resolve +MISSING +rc=0 — needs finishing the rebase/m)
    expect(r.stdout).toContain('3 of 8 actions missing')
  }, 60_000)

  it('--action review checks just that action', async () => {
    const dir = tempDir()
    const r = await helix(dir, ['agent', 'check', noReviewAgent(dir), '--action', 'review'])
    expect(r.code).toBe(1)
    expect(r.stdout.trim().split('\n')).toHaveLength(3)
    expect(await helix(dir, ['agent', 'check', noReviewAgent(dir), '--action', 'reveiw'])).toMatchObject({code: 1, stdout: ''})
  }, 30_000)

  it("--verbose shows each action's stdout and stderr under its line, sanitized (SPEC 22.2)", async () => {
    const dir = tempDir()
    const file = path.join(dir, 'failing.sh')
    writeFileSync(file, ['#!/usr/bin/env bash', 'cat >/dev/null', 'echo "npm test: 3 failing"', 'printf \'boom on stderr\\033[2J\\n\' >&2', 'exit 1', ''].join('\n'))
    chmodSync(file, 0o755)
    const r = await helix(dir, ['agent', 'check', file, '--action', 'implementation', '--verbose'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^ {2}implementation +MISSING +rc=1, bead in_progress — needs exit 0\n {6}\| npm test: 3 failing\n {6}\| boom on stderr\?\[2J\n/m)
    expect(r.stdout).not.toContain('\u001b')
    // without --verbose the output stays out
    expect((await helix(dir, ['agent', 'check', file, '--action', 'implementation'])).stdout).not.toContain('npm test: 3 failing')
  }, 30_000)

  it("a bare name that is a file here, not on PATH, hints './agent.sh'", async () => {
    const dir = tempDir()
    noReviewAgent(dir)
    const r = await helix(dir, ['agent', 'check', 'agent.sh'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("helix: agent 'agent.sh' not found on PATH (did you mean './agent.sh'?)\n")
  })
})

describe('doctor runs the review preflight', () => {
  it('a shipped minimal agent passes the preflight and doctor', async () => {
    const root = project({beads: []})
    const d = await helix(root, ['doctor', '--agent', path.join(AGENTS, 'minimal-agent.sh')])
    expect(d.stdout).toMatch(/review.*answers reviews/)
  }, 60_000)
})
