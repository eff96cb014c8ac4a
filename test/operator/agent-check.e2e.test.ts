// `helix agent check` (docs/agent-protocol.md): the shipped minimal agents answer every
// action; an agent that cannot review is caught, by `agent check`, by doctor and by run's
// preflight, before a night's run reaches its first review. Here the runs and the shipped
// agents' check (their many `helix` calls take the fast path only below a CLI started with
// NODE_ENV=production, which an in-process command is not); the rest of `helix agent
// check` runs in-process: agent-check.test.ts.
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess} from '../support/in-process.js'
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

describe('helix agent check of the shipped agents', () => {
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
})

describe('review agent preflight', () => {
  it('run with an agent that cannot review stops at start, before any dispatch; --no-auto-review runs', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', priority: 0}]})
    const agent = noReviewAgent(root)
    const r = helix(root, ['run', '--agent', agent, '--summary'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^helix: review agent .*agent\.sh gave no REVIEW_STATUS trailer to a review prompt/m)
    expect(r.stderr).toContain('helix agent check')
    expect(existsSync(path.join(root, '.ddx', 'run-state.json'))).toBe(false)
    // the probe's answer is cached by the agent's content: doctor reads it without running the agent again
    expect(existsSync(path.join(root, '.helix', 'agent-check.json'))).toBe(true)
    const d = await helixInProcess(root, ['doctor', '--agent', agent])
    expect(d.code).toBe(1)
    expect(d.stdout).toMatch(/review.*no REVIEW_STATUS/)
    // the documented way out: a run without the review
    const ok = helix(root, ['run', '--agent', agent, '--no-auto-review', '--summary'])
    expect(ok.code).toBe(0)
    expect((await helixInProcess(root, ['tracker', 'show', 'hx-a', '--json'])).stdout).toMatch(/"status":\s*"closed"/)
  }, 60_000)

  it('with the preflight off, the review stop shows its reason in status (not just "error")', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', priority: 0}]})
    spawnSync('git', ['init', '-q'], {cwd: root})
    const agent = noReviewAgent(root)
    const r = helix(root, ['run', '--agent', agent, '--summary', '--review-threshold', '0'], {HELIX_AGENT_PREFLIGHT: '0'})
    expect(r.stderr).toContain('helix: review output missing REVIEW_STATUS trailer')
    expect(r.code).toBe(1)
    const s = await helixInProcess(root, ['status'])
    expect(s.stdout).toMatch(/^ {2}Stopped: error \(review output missing REVIEW_STATUS trailer\), /m)
  }, 60_000)
})
