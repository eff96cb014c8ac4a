import {existsSync, readdirSync, rmSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess} from '../support/in-process.js'
import {isAlive, stubProject, type StubEnv} from './helpers.js'

// The one-shot commands (check, review, backfill, design, align, polish) in-process
// (test/support/in-process.ts): what each prints, refuses and asks its (stub) agent, without
// a CLI start each; the agents are still real processes. Through the built CLI
// (check.e2e, commands.e2e): an exit 0, exit 10, help, and the signals.

function helix(p: StubEnv, args: string[], env: NodeJS.ProcessEnv = {}) {
  return helixInProcess(p.root, args, {...p.env, ...env})
}

function logs(p: StubEnv): string[] {
  const dir = path.join(p.root, '.helix-logs')
  return existsSync(dir) ? readdirSync(dir) : []
}

describe('helix check (in-process)', () => {
  it('an invalid trailer is no trailer: exit 1', async () => {
    const p = stubProject()
    p.script({check: ['print:NEXT_ACTION:BUILDING']})
    const r = await helix(p, ['check', '--claude'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: unable to determine NEXT_ACTION from check output')
    expect(r.stdout).not.toMatch(/^NEXT_ACTION: BUILD$/m)
  })
  it('a failing agent fails the check even with a trailer', async () => {
    const p = stubProject()
    p.script({check: ['next:BUILD fail']})
    const r = await helix(p, ['check'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: check failed (agent rc=1)')
  })
  it('--dry-run prints command line and prompt and starts no process', async () => {
    const p = stubProject()
    const r = await helix(p, ['check', 'src/x', '--dry-run', '--model', 'm1'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`command: ${p.paths.codex} --dangerously-bypass-approvals-and-sandbox exec -C ${p.root} -m m1 -c model_reasoning_effort=low --ephemeral --json <prompt>`)
    expect(r.stdout).toContain('check action')
    expect(r.stdout).toContain('Scope: src/x')
    expect(existsSync(path.join(p.stubDir, 'calls.jsonl'))).toBe(false)
    expect(logs(p)).toHaveLength(0)
  })
  it('a missing agent binary: SPEC error, exit 1, nothing written', async () => {
    const p = stubProject()
    rmSync(p.paths.codex)
    const r = await helix(p, ['check'], {PATH: `${p.bin}${path.delimiter}/usr/bin${path.delimiter}/bin`})
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("helix: agent 'codex' not found on PATH\n")
    expect(logs(p)).toHaveLength(0)
    const r2 = await helix(p, ['align', '--agent', 'no-such-agent'])
    expect(r2.stderr).toBe("helix: agent 'no-such-agent' not found on PATH\n")
    expect(r2.code).toBe(1)
  })
  it('bad flags: one line, exit 1', async () => {
    const p = stubProject()
    expect(await helix(p, ['check', '--timeout', 'soon'])).toMatchObject({code: 1, stderr: "helix: invalid --timeout 'soon' (expected a positive number of seconds)\n"})
    expect(await helix(p, ['check', '--claude', '--codex'])).toMatchObject({code: 1})
    expect(logs(p)).toHaveLength(0)
  })
  it('timeout: exit 1 with the SPEC message', async () => {
    const p = stubProject()
    p.script({check: ['hang']})
    const r = await helix(p, ['check', '--timeout', '1'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^helix: \[\d\d:\d\d:\d\d\] codex timeout after 1s — killed$/m)
    expect(isAlive(p.calls()[0].pid)).toBe(false)
  })
  it('shell syntax in the scope is data', async () => {
    const p = stubProject()
    const r = await helix(p, ['check', '$(touch pwned); touch pwned2'])
    expect(r.code).toBe(0)
    expect(existsSync(path.join(p.root, 'pwned'))).toBe(false)
    expect(existsSync(path.join(p.root, 'pwned2'))).toBe(false)
    expect(p.calls()[0].prompt).toContain('Scope: $(touch pwned); touch pwned2')
  })
})

describe('helix review (in-process)', () => {
  it('defaults to the other agent, exit 0 when CLEAN', async () => {
    const p = stubProject()
    const r = await helix(p, ['review'])
    expect(r.code).toBe(0)
    expect(p.calls()[0]).toMatchObject({as: 'claude', action: 'review'})
    expect(p.calls()[0].prompt).toContain('Review scope: last-commit')
    expect(r.stderr).toContain('helix: review clean')
  })
  it('HELIX_REVIEW_AGENT and --agent choose the agent', async () => {
    const p = stubProject()
    expect((await helix(p, ['review'], {HELIX_REVIEW_AGENT: p.paths.command})).code).toBe(0)
    expect((await helix(p, ['review', '--codex'])).code).toBe(0)
    expect(p.calls().map((c) => c.as)).toEqual(['command', 'codex'])
  })
  it('unreadable review output exits 1', async () => {
    const p = stubProject()
    p.script({review: ['review:garbage']})
    const r = await helix(p, ['review'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: review output missing REVIEW_STATUS trailer')
  })
})

describe('helix backfill / design / align / polish (in-process)', () => {
  it('backfill needs a status and an existing report', async () => {
    const p = stubProject()
    p.script({backfill: ['backfill-ok', 'print:BACKFILL_STATUS: COMPLETE', 'backfill-ok tokens:5']})
    expect((await helix(p, ['backfill'])).code).toBe(0)
    rmSync(path.join(p.root, 'docs'), {recursive: true})
    const r = await helix(p, ['backfill'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: backfill output missing BACKFILL_REPORT trailer')
  })
  it('design runs the plan action with high effort; polish and align pass scope', async () => {
    const p = stubProject()
    expect((await helix(p, ['design', 'auth'])).code).toBe(0)
    expect((await helix(p, ['polish', '--effort', 'low'])).code).toBe(0)
    expect((await helix(p, ['align', 'api', '--claude'])).code).toBe(0)
    const [d, po, a] = p.calls()
    expect(d.action).toBe('plan')
    expect(d.prompt).toContain('Plan scope: auth')
    expect(d.argv).toContain('model_reasoning_effort=high')
    expect(po.prompt).toContain('Polish scope: repo')
    expect(po.argv).toContain('model_reasoning_effort=low')
    expect(a).toMatchObject({as: 'claude', action: 'alignment'})
    expect(a.argv).toEqual(expect.arrayContaining(['--effort', 'high']))
  })
  it('a failing pass exits 1', async () => {
    const p = stubProject()
    p.script({polish: ['fail']})
    const r = await helix(p, ['polish'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('helix: polish failed (agent rc=1)')
  })
})

// SPEC 14.3: a one-shot does not pause; exit 4 through the built CLI is oneshot-health.e2e's
describe('one-shot commands and agent health (in-process)', () => {
  it('claude refusing as root: exit 4 with the non-root / IS_SANDBOX hint', async () => {
    const p = stubProject()
    p.script({review: ['replay:claude-2.1.197-as-root.txt']})
    const r = await helix(p, ['review', '--claude'])
    expect(r.code).toBe(4)
    expect(r.stderr).toContain('helix: agent claude unavailable: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons; run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust')
  })

  it('codex out of quota: exit 4 with the reset time, no pause', async () => {
    const p = stubProject()
    p.script({check: ['quota:90']})
    const t0 = Date.now()
    const r = await helix(p, ['check'])
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/^helix: codex quota exhausted; resets at \d\d:\d\d \(in (1m|2m)\) — You've hit your usage limit\. Try again in 90s\.$/m)
    expect(Date.now() - t0).toBeLessThan(30_000)
  })

  it('command agent QUOTA with no usable time: exit 4, no reset time given', async () => {
    const p = stubProject()
    p.script({alignment: ['quota']})
    const r = await helix(p, ['align', '--agent', p.paths.command])
    expect(r.code).toBe(4)
    expect(r.stderr).toContain(`helix: ${p.paths.command} quota exhausted; no reset time given, try again later`)
  })

  it('a command agent that reports no tokens gets no `0 tokens` in its completion line', async () => {
    const p = stubProject()
    p.script({check: ['next:WAIT']})
    const r = await helix(p, ['check', '--agent', p.paths.command])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/complete \(rc=0, \d+s\) — log/)
  })
})
