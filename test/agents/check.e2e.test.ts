import {once} from 'node:events'
import {existsSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {isAlive, readLog, stubProject, type StubEnv} from './helpers.js'
import {runCli, startCli} from '../support/cli.js'

// The one-shot commands through the built CLI: what needs the process — an exit 0 and an
// exit 10 as the shell sees them, help's routing, SIGTERM and SIGINT. What each command
// prints, refuses and asks its agent: oneshot-cli.test.ts (in-process).

// End-to-end: the BUILT cli (npm run build first) driving stub agents.

function helix(p: StubEnv, args: string[], env: NodeJS.ProcessEnv = {}) {
  return runCli(args, {cwd: p.root, env: {...p.env, ...env}})
}

function logs(p: StubEnv): string[] {
  const dir = path.join(p.root, '.helix-logs')
  return existsSync(dir) ? readdirSync(dir) : []
}

describe('helix check', () => {
  it('prints the agent output and NEXT_ACTION, exit 0, one new log', () => {
    const p = stubProject()
    p.script({check: [['print:looked at everything', 'next:DESIGN']]})
    const r = helix(p, ['check'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('looked at everything')
    expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('NEXT_ACTION: DESIGN')
    expect(logs(p)).toHaveLength(1)
    expect(p.calls()[0]).toMatchObject({as: 'codex', action: 'check', cwd: p.root, stdin: 'devnull'})
    expect(p.calls()[0].argv).toContain('model_reasoning_effort=low')
    const recs = readLog(path.join(p.root, '.helix-logs', logs(p)[0]))
    expect(recs.find((x) => x.msg === 'dispatch')).toMatchObject({dispatch: 1, action: 'check', agent: 'codex'})
    expect(recs.find((x) => x.msg === 'dispatch end')).toMatchObject({dispatch: 1, rc: 0, end: 'exited', timed_out: false})
    // the same `log LA–LB in <path>` pointer as the loop's summary lines (docs/agents.md)
    expect(r.stderr).toMatch(/ codex complete \(rc=0, \d+s(, \d+ tokens)?\) — log L\d+–L\d+ in \S+\.log\n/)
    // a second invocation opens its own log
    expect(helix(p, ['check']).code).toBe(0)
    expect(logs(p)).toHaveLength(2)
  })

  it('help never starts an agent or writes a log', () => {
    const p = stubProject()
    for (const args of [['check', '--help'], ['help', 'check'], ['review', '--help'], ['help']]) {
      const r = helix(p, args)
      expect(r.code, args.join(' ')).toBe(0)
    }
    expect(existsSync(path.join(p.stubDir, 'calls.jsonl'))).toBe(false)
    expect(logs(p)).toHaveLength(0)
  })

  it('SIGTERM kills the agent group and exits 143', async () => {
    const p = stubProject()
    p.script({check: ['hang-ignore-term-fork']})
    const {child} = startCli(['check', '--agent', p.paths.command], {cwd: p.root, env: p.env, stdin: 'ignore'})
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    while (!out.includes('hanging with grandchild')) await once(child.stdout, 'data')
    child.kill('SIGTERM')
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)))
    expect(code).toBe(143)
    const {readFileSync} = await import('node:fs')
    const pids = readFileSync(path.join(p.stubDir, 'pids'), 'utf8').trim().split('\n').map(Number)
    for (const pid of pids) expect(isAlive(pid)).toBe(false)
  }, 30_000)
})

describe('helix review', () => {
  it('ISSUES_FOUND exits 10', () => {
    const p = stubProject()
    p.script({review: ['review:ISSUES_FOUND:2']})
    const r = helix(p, ['review', 'hx-1'])
    expect(r.code).toBe(10)
    expect(r.stderr).toMatch(/helix: review reported 2 issue\(s\), \d filed as tracker issues/)
  })
})

describe('helix check interrupted', () => {
  it('SIGINT kills the agent and exits 130; a second SIGINT exits at once and still kills the group', async () => {
    const p = stubProject()
    p.script({check: ['hang']})
    const {readFileSync} = await import('node:fs')
    const start = async () => {
      const {child} = startCli(['check', '--claude'], {cwd: p.root, env: p.env, stdin: 'ignore'})
      const n = p.calls().length
      while (p.calls().length === n) await new Promise((r) => setTimeout(r, 50))
      return child
    }
    const c1 = await start()
    c1.kill('SIGINT')
    expect(await new Promise((r) => c1.on('exit', (c) => r(c)))).toBe(130)
    expect(isAlive(p.calls()[0].pid)).toBe(false)

    p.script({check: ['hang-ignore-term-fork']})
    const c2 = await start()
    while (!existsSync(path.join(p.stubDir, 'pids'))) await new Promise((r) => setTimeout(r, 50))
    c2.kill('SIGINT')
    await new Promise((r) => setTimeout(r, 300))
    c2.kill('SIGINT')
    const code = await new Promise((r) => c2.on('exit', (c, sig) => r(c ?? sig)))
    expect([130, 'SIGINT']).toContain(code)
    const pids = readFileSync(path.join(p.stubDir, 'pids'), 'utf8').trim().split('\n').map(Number)
    // SIGKILL was sent before helix exited; give the kernel a moment to finish them off
    for (let i = 0; i < 100 && pids.some(isAlive); i++) await new Promise((r) => setTimeout(r, 20))
    for (const pid of pids) expect(isAlive(pid)).toBe(false)
  }, 30_000)
})
