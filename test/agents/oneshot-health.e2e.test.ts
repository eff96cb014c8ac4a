import path from 'node:path'
import {rmSync} from 'node:fs'
import {afterEach, describe, expect, it} from 'vitest'
import {stubProject, type StubEnv} from './helpers.js'
import {runCli} from '../support/cli.js'

// One-shot commands do not pause (SPEC 14.3): an agent out of quota or unavailable
// ends them with exit 4 and one line naming the cause. The BUILT cli (npm run build first).

const projects: StubEnv[] = []
afterEach(() => {
  for (const p of projects.splice(0)) rmSync(path.dirname(p.root), {recursive: true, force: true})
})

function project(script: Record<string, unknown>): StubEnv {
  const p = stubProject()
  projects.push(p)
  p.script(script)
  return p
}

function helix(p: StubEnv, args: string[]) {
  return runCli(args, {cwd: p.root, env: p.env})
}

describe('one-shot commands and agent health', () => {
  it('claude not logged in (the real capture): exit 4, `helix: agent claude unavailable: Not logged in …`', () => {
    const p = project({check: ['unavailable']})
    const r = helix(p, ['check', '--claude'])
    expect(r.code).toBe(4)
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('helix: agent claude unavailable: Not logged in · Please run /login')
  })

  it('claude refusing as root: exit 4 with the non-root / IS_SANDBOX hint', () => {
    const p = project({review: ['replay:claude-2.1.197-as-root.txt']})
    const r = helix(p, ['review', '--claude'])
    expect(r.code).toBe(4)
    expect(r.stderr).toContain('helix: agent claude unavailable: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons; run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust')
  })

  it('codex out of quota: exit 4 with the reset time, no pause', () => {
    const p = project({check: ['quota:90']})
    const t0 = Date.now()
    const r = helix(p, ['check'])
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/^helix: codex quota exhausted; resets at \d\d:\d\d \(in (1m|2m)\) — You've hit your usage limit\. Try again in 90s\.$/m)
    expect(Date.now() - t0).toBeLessThan(30_000)
  })

  it('command agent QUOTA with no usable time: exit 4, no reset time given', () => {
    const p = project({alignment: ['quota']})
    const r = helix(p, ['align', '--agent', p.paths.command])
    expect(r.code).toBe(4)
    expect(r.stderr).toContain(`helix: ${p.paths.command} quota exhausted; no reset time given, try again later`)
  })

  it('a command agent that reports no tokens gets no `0 tokens` in its completion line', () => {
    const p = project({check: ['next:WAIT']})
    const r = helix(p, ['check', '--agent', p.paths.command])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/complete \(rc=0, \d+s\) — log/)
  })
})
