// `helix agent check` (docs/agent-protocol.md): the shipped minimal agents answer every
// action; an agent that cannot review is caught, by `agent check`, by doctor and by run's
// preflight, before a night's run reaches its first review.
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helix, project, REPO, tempDir} from './helpers.js'

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
  it.each(['minimal-agent.sh', 'minimal-agent.mjs'])('the shipped %s answers all eight actions (exit 0)', (name) => {
    // its own TMPDIR: other files' runs (doctor, run's review preflight) make and remove
    // helix-agent-check-* scratch projects in the shared one at the same time
    const tmp = tempDir('helix-agent-check-tmp-')
    const r = helix(tempDir(), ['agent', 'check', path.join(AGENTS, name)], {TMPDIR: tmp})
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    for (const a of ['implementation', 'check', 'review', 'alignment', 'plan', 'polish', 'backfill', 'resolve']) expect(r.stdout).toMatch(new RegExp(`^  ${a} +ok `, 'm'))
    expect(r.stdout).toContain('bead closed')
    expect(r.stdout).toContain('REVIEW_STATUS: CLEAN')
    expect(r.stdout).toMatch(/^ {2}resolve +ok +rc=0, rebase finished, no conflict markers/m)
    expect(r.stdout).toContain('all 8 actions answered')
    // the throw-away project is gone, and nothing else was left in TMPDIR (the agent's PATH shim lives in the project)
    expect(readdirSync(tmp)).toEqual([])
  }, 60_000)

  it('an agent lacking review: one MISSING line naming REVIEW_STATUS, exit 1', () => {
    const dir = tempDir()
    const r = helix(dir, ['agent', 'check', noReviewAgent(dir)])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^ {2}review +MISSING +rc=0 — needs REVIEW_STATUS: CLEAN\|ISSUES_FOUND/m)
    expect(r.stdout).toMatch(/^ {2}implementation +ok /m)
    expect(r.stdout).toMatch(/^ {2}check +ok +rc=0, NEXT_ACTION: STOP/m)
    expect(r.stdout).toMatch(/^ {2}backfill +MISSING /m)
    // SPEC 20.4: an agent that ignores the resolve action leaves the rebase stopped
    expect(r.stdout).toMatch(/^ {2}resolve +MISSING +rc=0 — needs finishing the rebase/m)
    expect(r.stdout).toContain('3 of 8 actions missing')
  }, 60_000)

  it('--action review checks just that action', () => {
    const dir = tempDir()
    const r = helix(dir, ['agent', 'check', noReviewAgent(dir), '--action', 'review'])
    expect(r.code).toBe(1)
    expect(r.stdout.trim().split('\n')).toHaveLength(3)
    expect(helix(dir, ['agent', 'check', noReviewAgent(dir), '--action', 'reveiw'])).toMatchObject({code: 1, stdout: ''})
  }, 30_000)

  it("--verbose shows each action's stdout and stderr under its line, sanitized (SPEC 22.2)", () => {
    const dir = tempDir()
    const file = path.join(dir, 'failing.sh')
    writeFileSync(file, ['#!/usr/bin/env bash', 'cat >/dev/null', 'echo "npm test: 3 failing"', 'printf \'boom on stderr\\033[2J\\n\' >&2', 'exit 1', ''].join('\n'))
    chmodSync(file, 0o755)
    const r = helix(dir, ['agent', 'check', file, '--action', 'implementation', '--verbose'])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^ {2}implementation +MISSING +rc=1, bead in_progress — needs exit 0\n {6}\| npm test: 3 failing\n {6}\| boom on stderr\?\[2J\n/m)
    expect(r.stdout).not.toContain('\u001b')
    // without --verbose the output stays out
    expect(helix(dir, ['agent', 'check', file, '--action', 'implementation']).stdout).not.toContain('npm test: 3 failing')
  }, 30_000)

  it("a bare name that is a file here, not on PATH, hints './agent.sh'", () => {
    const dir = tempDir()
    noReviewAgent(dir)
    const r = helix(dir, ['agent', 'check', 'agent.sh'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("helix: agent 'agent.sh' not found on PATH (did you mean './agent.sh'?)\n")
  })
})

describe('review agent preflight', () => {
  it('run with an agent that cannot review stops at start, before any dispatch; --no-auto-review runs', () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', priority: 0}]})
    const agent = noReviewAgent(root)
    const r = helix(root, ['run', '--agent', agent, '--summary'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^helix: review agent .*agent\.sh gave no REVIEW_STATUS trailer to a review prompt/m)
    expect(r.stderr).toContain('helix agent check')
    expect(existsSync(path.join(root, '.ddx', 'run-state.json'))).toBe(false)
    // the probe's answer is cached by the agent's content: doctor reads it without running the agent again
    expect(existsSync(path.join(root, '.helix', 'agent-check.json'))).toBe(true)
    const d = helix(root, ['doctor', '--agent', agent])
    expect(d.code).toBe(1)
    expect(d.stdout).toMatch(/review.*no REVIEW_STATUS/)
    // the documented way out: a run without the review
    const ok = helix(root, ['run', '--agent', agent, '--no-auto-review', '--summary'])
    expect(ok.code).toBe(0)
    expect(helix(root, ['tracker', 'show', 'hx-a', '--json']).stdout).toMatch(/"status":\s*"closed"/)
  }, 60_000)

  it('with the preflight off, the review stop shows its reason in status (not just "error")', () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', priority: 0}]})
    spawnSync('git', ['init', '-q'], {cwd: root})
    const agent = noReviewAgent(root)
    const r = helix(root, ['run', '--agent', agent, '--summary', '--review-threshold', '0'], {HELIX_AGENT_PREFLIGHT: '0'})
    expect(r.stderr).toContain('helix: review output missing REVIEW_STATUS trailer')
    expect(r.code).toBe(1)
    const s = helix(root, ['status'])
    expect(s.stdout).toMatch(/^ {2}Stopped: error \(review output missing REVIEW_STATUS trailer\), /m)
  }, 60_000)

  it('a shipped minimal agent passes the preflight and doctor', () => {
    const root = project({beads: []})
    const d = helix(root, ['doctor', '--agent', path.join(AGENTS, 'minimal-agent.sh')])
    expect(d.stdout).toMatch(/review.*answers reviews/)
  }, 60_000)
})
