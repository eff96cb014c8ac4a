import {rmSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {dispatchAgent} from '../../src/agents/runner.js'
import type {AgentSpec, DispatchRequest} from '../../src/agents/types.js'
import {openSessionLog} from '../../src/output/session-log.js'
import {stubProject, type StubEnv} from './helpers.js'

// The stub agents' health shapes (fixtures/agents/stub-agent.mjs) through the real
// runner and decoders: DispatchResult.verdict (health/failed/failureLine/costUsd/tokensReported).

type Kind = 'codex' | 'claude' | 'command'
const projects: StubEnv[] = []
afterEach(() => {
  for (const p of projects.splice(0)) rmSync(path.dirname(p.root), {recursive: true, force: true})
})

async function run(kind: Kind, step: string | string[], extraEnv: Record<string, string> = {}, extra: Partial<DispatchRequest> = {}) {
  const p = stubProject()
  projects.push(p)
  p.script({check: [step]})
  const agent: AgentSpec = {kind, name: kind === 'command' ? p.paths.command : kind, path: p.paths[kind]}
  const log = openSessionLog(path.join(p.root, '.helix-logs'))
  try {
    return await dispatchAgent({agent, action: 'check', prompt: 'helix check action\n', root: p.root, timeoutSec: 30, env: {HELIX_STUB_DIR: p.stubDir, NODE_ENV: 'production', ...extraEnv}, log, killGraceMs: 500, ...extra})
  } finally {
    log.close()
  }
}

describe('agent health through the runner (stub agents)', () => {
  it('a healthy dispatch: health ok, tokens reported, last line', async () => {
    const res = await run('claude', ['print:all good', 'next:WAIT', 'tokens:300'])
    expect(res.verdict.health).toEqual({kind: 'ok'})
    expect(res.verdict.failed).toBe(false)
    expect(res.tokens).toBe(300)
    expect(res.verdict.tokensReported).toBe(true)
    expect(res.verdict.costUsd).toBeCloseTo(0.0003)
    expect(res.verdict.lastLine).toBe('NEXT_ACTION: WAIT')
  })

  it('command agent with no TOKENS_USED: tokensReported false', async () => {
    const res = await run('command', 'print:hello')
    expect(res.verdict.tokensReported).toBe(false)
    expect(res.verdict.failureLine).toBe('hello')
  })

  it('claude quota: rate_limit_event rejected with resetsAt ~N s ahead, then a 429 result', async () => {
    const before = Date.now()
    const res = await run('claude', 'quota:120')
    expect(res.rc).toBe(1)
    expect(res.verdict.health.kind).toBe('quota')
    const at = Date.parse((res.verdict.health as {resetAt: string}).resetAt)
    expect(at).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 119_000)
    expect(at).toBeLessThanOrEqual(Date.now() + 121_000)
    expect(res.verdict.failed).toBe(true)
  })

  it('codex quota, text and --json shapes: `try again in 2s`, `try again at HH:MM`', async () => {
    for (const env of [{}, {HELIX_STUB_CODEX_JSON: '1'}] as Array<Record<string, string>>) {
      const before = Date.now()
      const res = await run('codex', 'quota:2', env)
      expect(res.verdict.health.kind).toBe('quota')
      const at = Date.parse((res.verdict.health as {resetAt: string}).resetAt)
      expect(at - before).toBeGreaterThanOrEqual(1900)
      expect(at - Date.now()).toBeLessThanOrEqual(2100)
    }
    const res = await run('codex', 'quota:at:23:59', {HELIX_STUB_CODEX_JSON: '1'})
    expect(res.verdict.failed).toBe(true)
    const at = new Date((res.verdict.health as {resetAt: string}).resetAt)
    expect([at.getHours(), at.getMinutes()]).toEqual([23, 59])
  })

  it('command quota and unavailable trailers', async () => {
    const q = await run('command', 'quota:5')
    expect(q.verdict.health).toMatchObject({kind: 'quota'})
    const u = await run('command', ['unavailable:license expired'])
    expect(u.verdict.health).toEqual({kind: 'unavailable', reason: 'license expired'})
    expect(u.verdict.failureLine).toBe('license expired')
  })

  it('unavailable: claude replays the real not-logged-in capture; the root refusal capture; codex 401', async () => {
    const a = await run('claude', 'unavailable')
    expect(a).toMatchObject({rc: 1, verdict: {failed: true, failureLine: 'Not logged in · Please run /login', health: {kind: 'unavailable', reason: 'Not logged in · Please run /login'}}})
    const b = await run('claude', 'replay:claude-2.1.197-as-root.txt')
    expect(b.verdict.health.kind).toBe('unavailable')
    expect((b.verdict.health as {reason: string}).reason).toMatch(/root\/sudo privileges.*; run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust$/)
    const c = await run('codex', 'unavailable', {HELIX_STUB_CODEX_JSON: '1'})
    expect(c.verdict.health.kind).toBe('unavailable')
  })

  it('codex --json happy path: agent_message is the text, turn usage the tokens', async () => {
    const res = await run('codex', ['json', 'print:checked', 'next:BUILD', 'tokens:50'])
    expect(res.text).toBe('checked\nNEXT_ACTION: BUILD')
    expect(res.tokens).toBe(50)
    expect(res.verdict.tokensReported).toBe(true)
  })

  it('reconnect-forever is killed at the timeout; nothing it said was progress, so the agent is unavailable, not the bead at fault', async () => {
    const res = await run('codex', 'reconnect-forever', {HELIX_STUB_RECONNECT_MS: '50'}, {timeoutSec: 1.5})
    expect(res.end).toBe('timeout')
    expect(res.verdict.lastLine).toBeNull()
    expect(res.verdict.progressed).toBe(false)
    expect(res.verdict.health).toEqual({kind: 'unavailable', reason: expect.stringMatching(/^timed out after 1\.5s without starting work; its last notice: Reconnecting\.\.\. waiting for network/)})
    expect(res.verdict.failureLine).toMatch(/^\[codex\] Reconnecting\.\.\. waiting for network/)
  })

  it('a silent agent killed at the timeout stays a bead failure (no notice: nothing says the agent is down)', async () => {
    const res = await run('command', 'silent-hang', {}, {timeoutSec: 1})
    expect(res.end).toBe('timeout')
    expect(res.verdict.health).toEqual({kind: 'ok'})
  })
})
