import {rmSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {stubProject, type StubEnv} from './helpers.js'
import {runCli} from '../support/cli.js'

// The one-shot commands, part 2 of 2: review, backfill, design, align, polish (part 1: check.e2e).

// End-to-end: the BUILT cli (npm run build first) driving stub agents.

function helix(p: StubEnv, args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCli(args, {cwd: p.root, env: {...p.env, ...env}})
}

describe('helix review', () => {
  it('defaults to the other agent, exit 0 when CLEAN', () => {
    const p = stubProject()
    const r = helix(p, ['review'])
    expect(r.code).toBe(0)
    expect(p.calls()[0]).toMatchObject({as: 'claude', action: 'review'})
    expect(p.calls()[0].prompt).toContain('Review scope: last-commit')
    expect(r.stderr).toContain('helix: review clean')
  })

  it('HELIX_REVIEW_AGENT and --agent choose the agent', () => {
    const p = stubProject()
    expect(helix(p, ['review'], {HELIX_REVIEW_AGENT: p.paths.command}).code).toBe(0)
    expect(helix(p, ['review', '--codex']).code).toBe(0)
    expect(p.calls().map((c) => c.as)).toEqual(['command', 'codex'])
  })

  it('ISSUES_FOUND exits 10', () => {
    const p = stubProject()
    p.script({review: ['review:ISSUES_FOUND:2']})
    const r = helix(p, ['review', 'hx-1'])
    expect(r.code).toBe(10)
    expect(r.stderr).toMatch(/helix: review reported 2 issue\(s\), \d filed as tracker issues/)
  })

  it('unreadable review output exits 1', () => {
    const p = stubProject()
    p.script({review: ['review:garbage']})
    const r = helix(p, ['review'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: review output missing REVIEW_STATUS trailer')
  })
})

describe('helix backfill / design / align / polish', () => {
  it('backfill needs a status and an existing report', () => {
    const p = stubProject()
    p.script({backfill: ['backfill-ok', 'print:BACKFILL_STATUS: COMPLETE', 'backfill-ok tokens:5']})
    expect(helix(p, ['backfill']).code).toBe(0)
    rmSync(path.join(p.root, 'docs'), {recursive: true})
    const r = helix(p, ['backfill'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: backfill output missing BACKFILL_REPORT trailer')
  })

  it('design runs the plan action with high effort; polish and align pass scope', () => {
    const p = stubProject()
    expect(helix(p, ['design', 'auth']).code).toBe(0)
    expect(helix(p, ['polish', '--effort', 'low']).code).toBe(0)
    expect(helix(p, ['align', 'api', '--claude']).code).toBe(0)
    const [d, po, a] = p.calls()
    expect(d.action).toBe('plan')
    expect(d.prompt).toContain('Plan scope: auth')
    expect(d.argv).toContain('model_reasoning_effort=high')
    expect(po.prompt).toContain('Polish scope: repo')
    expect(po.argv).toContain('model_reasoning_effort=low')
    expect(a).toMatchObject({as: 'claude', action: 'alignment'})
    expect(a.argv).toEqual(expect.arrayContaining(['--effort', 'high']))
  })

  it('a failing pass exits 1', () => {
    const p = stubProject()
    p.script({polish: ['fail']})
    const r = helix(p, ['polish'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: polish failed (agent rc=1)')
  })
})
