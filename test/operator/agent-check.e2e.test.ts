// `helix agent check` (docs/agent-protocol.md): the shipped minimal agents answer every
// action; an agent that cannot review is caught, by `agent check`, by doctor and by run's
// preflight, before a night's run reaches its first review.
// One check runs through the binary (its exit 0 as the shell sees it); the rest run the
// command in-process (issue 30) with NODE_ENV=production, so the agents' `helix tracker close`
// (the PATH shim → bin/run.js) takes the fast path through dist/: this file stays e2e for
// that. Agents that never call helix: agent-check.test.ts.
import {spawnSync} from 'node:child_process'
import {existsSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess} from '../support/in-process.js'
import {helix, project, REPO, tempDir} from './helpers.js'
import {noReviewAgent} from './no-review-agent.js'

const AGENTS = path.join(REPO, 'fixtures', 'agents')

/** `helix <args>` in this process; what it spawns sees NODE_ENV=production (the agents' helix calls take dist/'s fast path) */
function inProc(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return helixInProcess(cwd, args, env, 'production')
}

describe('helix agent check', () => {
  it.each([
    ['minimal-agent.sh', 'the binary'],
    ['minimal-agent.mjs', 'in-process'],
  ])('the shipped %s answers all eight actions (exit 0; %s)', async (name, how) => {
    // its own TMPDIR: other files' runs (doctor, run's review preflight) make and remove
    // helix-agent-check-* scratch projects in the shared one at the same time
    const tmp = tempDir('helix-agent-check-tmp-')
    const args = ['agent', 'check', path.join(AGENTS, name)]
    const r = how === 'the binary' ? helix(tempDir(), args, {TMPDIR: tmp}) : await inProc(tempDir(), args, {TMPDIR: tmp})
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

  it('an agent lacking review: one MISSING line naming REVIEW_STATUS, exit 1', async () => {
    const dir = tempDir()
    const r = await inProc(dir, ['agent', 'check', noReviewAgent(dir)])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^ {2}review +MISSING +rc=0 — needs REVIEW_STATUS: CLEAN\|ISSUES_FOUND/m)
    expect(r.stdout).toMatch(/^ {2}implementation +ok /m)
    expect(r.stdout).toMatch(/^ {2}check +ok +rc=0, NEXT_ACTION: STOP/m)
    expect(r.stdout).toMatch(/^ {2}backfill +MISSING /m)
    // SPEC 20.4: an agent that ignores the resolve action leaves the rebase stopped
    expect(r.stdout).toMatch(/^ {2}resolve +MISSING +rc=0 — needs finishing the rebase/m)
    expect(r.stdout).toContain('3 of 8 actions missing')
  }, 60_000)
})

describe('review agent preflight', () => {
  it('run with an agent that cannot review stops at start, before any dispatch; --no-auto-review runs', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', priority: 0}]})
    const agent = noReviewAgent(root)
    const r = await inProc(root, ['run', '--agent', agent, '--summary'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^helix: review agent .*agent\.sh gave no REVIEW_STATUS trailer to a review prompt/m)
    expect(r.stderr).toContain('helix agent check')
    expect(existsSync(path.join(root, '.ddx', 'run-state.json'))).toBe(false)
    // the probe's answer is cached by the agent's content: doctor reads it without running the agent again
    expect(existsSync(path.join(root, '.helix', 'agent-check.json'))).toBe(true)
    const d = await inProc(root, ['doctor', '--agent', agent])
    expect(d.code).toBe(1)
    expect(d.stdout).toMatch(/review.*no REVIEW_STATUS/)
    // the documented way out: a run without the review
    const ok = await inProc(root, ['run', '--agent', agent, '--no-auto-review', '--summary'])
    expect(ok.code).toBe(0)
    expect((await inProc(root, ['tracker', 'show', 'hx-a', '--json'])).stdout).toMatch(/"status":\s*"closed"/)
  }, 60_000)

  it('with the preflight off, the review stop shows its reason in status (not just "error")', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', priority: 0}]})
    spawnSync('git', ['init', '-q'], {cwd: root})
    const agent = noReviewAgent(root)
    const r = await inProc(root, ['run', '--agent', agent, '--summary', '--review-threshold', '0'], {HELIX_AGENT_PREFLIGHT: '0'})
    expect(r.stderr).toContain('helix: review output missing REVIEW_STATUS trailer')
    expect(r.code).toBe(1)
    const s = await inProc(root, ['status'])
    expect(s.stdout).toMatch(/^ {2}Stopped: error \(review output missing REVIEW_STATUS trailer\), /m)
  }, 60_000)

  it('a shipped minimal agent passes the preflight and doctor', async () => {
    const root = project({beads: []})
    const d = await inProc(root, ['doctor', '--agent', path.join(AGENTS, 'minimal-agent.sh')])
    expect(d.stdout).toMatch(/review.*answers reviews/)
  }, 60_000)
})
