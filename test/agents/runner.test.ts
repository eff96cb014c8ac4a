import {existsSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {buildInvocation, formatDryRun} from '../../src/agents/invocation.js'
import {dispatchAgent} from '../../src/agents/runner.js'
import {killAllAgentGroups, liveAgentGroups} from '../../src/proc/groups.js'
import type {AgentSpec, DispatchRequest} from '../../src/agents/types.js'
import {openSessionLog} from '../../src/output/session-log.js'
import {isAlive, readLog, stubProject as makeStubProject, type StubEnv} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

// every test removes its temp project (the stub project's base dir holds proj/, bin/, stub/)
const made: string[] = []
afterEach(() => {
  for (const d of made.splice(0)) rmSync(d, {recursive: true, force: true})
})
function stubProject(): StubEnv {
  const p = makeStubProject()
  made.push(path.dirname(p.root))
  return p
}

function spec(p: StubEnv, kind: 'codex' | 'claude' | 'command'): AgentSpec {
  return {kind, name: kind === 'command' ? p.paths.command : kind, path: p.paths[kind]}
}

function req(p: StubEnv, kind: 'codex' | 'claude' | 'command', prompt: string, extra: Partial<DispatchRequest> = {}): DispatchRequest {
  return {
    agent: spec(p, kind),
    action: 'check',
    prompt,
    root: p.root,
    timeoutSec: 30,
    // HELIX_KILL_GRACE_MS: no test here pays the real 10 s SIGTERM → SIGKILL grace
    env: {HELIX_STUB_DIR: p.stubDir, NODE_ENV: 'production', HELIX_KILL_GRACE_MS: '500'},
    log: openSessionLog(path.join(p.root, '.helix-logs')),
    ...extra,
  }
}

describe('buildInvocation', () => {
  const agent = (kind: 'codex' | 'claude' | 'command'): AgentSpec => ({kind, name: kind, path: `/bin/${kind}`})
  it('codex: exact argv, prompt last, stdin ignored', () => {
    const inv = buildInvocation({agent: agent('codex'), action: 'implementation', prompt: 'P', root: '/r', model: 'gpt-x'})
    expect(inv).toEqual({
      file: '/bin/codex',
      args: ['--dangerously-bypass-approvals-and-sandbox', 'exec', '-C', '/r', '-m', 'gpt-x', '-c', 'model_reasoning_effort=medium', '--ephemeral', '--json', 'P'],
      stdin: 'ignore',
    })
  })
  it("codex in a worker's worktree: -C names the worktree, not the project root (SPEC 15.1)", () => {
    const inv = buildInvocation({agent: agent('codex'), action: 'implementation', prompt: 'P', root: '/r', cwd: '/r/.helix/worktrees/hx-1-1'})
    expect(inv.args.slice(0, 4)).toEqual(['--dangerously-bypass-approvals-and-sandbox', 'exec', '-C', '/r/.helix/worktrees/hx-1-1'])
  })
  it('claude: exact argv, prompt on stdin', () => {
    const inv = buildInvocation({agent: agent('claude'), action: 'review', prompt: 'P', root: '/r', effort: 'low'})
    expect(inv).toEqual({
      file: '/bin/claude',
      args: ['-p', '--permission-mode', 'bypassPermissions', '--dangerously-skip-permissions', '--no-session-persistence', '--effort', 'low', '--output-format', 'stream-json', '--verbose'],
      stdin: {input: 'P'},
    })
  })
  it('command: no args, prompt on stdin', () => {
    expect(buildInvocation({agent: agent('command'), action: 'check', prompt: 'P', root: '/r'})).toEqual({file: '/bin/command', args: [], stdin: {input: 'P'}})
  })
  it('dry-run text shows the command line and the prompt', () => {
    const inv = buildInvocation({agent: agent('codex'), action: 'check', prompt: "it's $(x)", root: '/r'})
    const text = formatDryRun(inv, "it's $(x)", '/r')
    expect(text).toContain('command: /bin/codex --dangerously-bypass-approvals-and-sandbox exec -C /r -c model_reasoning_effort=low --ephemeral --json <prompt>')
    expect(text).toContain("stdin: /dev/null")
    expect(text).toContain("--- prompt ---\nit's $(x)\n--- end prompt ---")
  })
})

describe('dispatchAgent with stub agents', () => {
  it('codex: argv, /dev/null stdin, env, cwd, tokens with commas, prompt echo not in text', async () => {
    const p = stubProject()
    p.script({implementation: ['tokens:1234 print:did the work']})
    const shown: string[] = []
    const r = req(p, 'codex', 'helix implementation action\nImplementation target: hx-1\nNEXT_ACTION: STOP\n', {
      action: 'implementation',
      beadId: 'hx-1',
      claimToken: 'tok',
      onLine: (l) => shown.push(l),
    })
    const res = await dispatchAgent(r)
    r.log.close()
    expect(res.rc).toBe(0)
    expect(res.end).not.toBe('timeout')
    expect(res.tokens).toBe(1234)
    expect(res.text).toContain('did the work')
    expect(res.text).not.toContain('NEXT_ACTION') // the echoed prompt is not agent output
    expect(shown).toContain('did the work')
    expect(shown.some((l) => l.startsWith('OpenAI Codex'))).toBe(false)
    expect(shown).not.toContain('1,234')
    const [call] = p.calls()
    expect(call.stdin).toBe('devnull')
    expect(call.cwd).toBe(p.root)
    expect(call.argv.slice(0, 4)).toEqual(['--dangerously-bypass-approvals-and-sandbox', 'exec', '-C', p.root])
    expect(call.env).toEqual({HELIX_BEAD_ID: 'hx-1', HELIX_CLAIM_TOKEN: 'tok', HELIX_ACTION: 'implementation', HELIX_RUN_LOG: r.log.path})
  })

  it('codex that reads stdin does not block', async () => {
    const p = stubProject()
    p.script({check: ['read-stdin next:WAIT']})
    const res = await dispatchAgent(req(p, 'codex', 'helix check action\n'))
    expect(res.rc).toBe(0)
    expect(res.text).toContain('read stdin to the end')
  })

  it('claude: stream-json decoded, result text, tokens = input + output', async () => {
    const p = stubProject()
    p.script({check: [['print:checked', 'next:BUILD', 'tokens:301']]})
    const shown: string[] = []
    const r = req(p, 'claude', 'helix check action\n', {onLine: (l) => shown.push(l)})
    const res = await dispatchAgent(r)
    expect(res.rc).toBe(0)
    expect(res.tokens).toBe(301)
    expect(res.text).toBe('checked\nNEXT_ACTION: BUILD')
    expect(shown).toEqual(['checked', 'NEXT_ACTION: BUILD'])
    expect(p.calls()[0].stdin).toBe('pipe')
    expect(p.calls()[0].prompt).toBe('helix check action\n')
    const agentRecs = readLog(r.log.path).filter((x) => x.stream === 'agent').map((x) => x.msg)
    expect(agentRecs[0]).toMatch(/^\[claude init\]/)
    expect(agentRecs.some((m) => m.startsWith('{'))).toBe(false)
  })

  it('claude tool calls are one line each', async () => {
    const p = stubProject()
    p.script({implementation: ['create-children:1']})
    const shown: string[] = []
    const res = await dispatchAgent(req(p, 'claude', 'helix implementation action\nImplementation target: hx-9\n', {action: 'implementation', onLine: (l) => shown.push(l)}))
    expect(res.rc).toBe(0)
    expect(shown).toContain('⏺ Bash(helix tracker create Child 1 of hx-9 --parent hx-9)')
  })

  it('command agent: TOKENS_USED, stdout and stderr interleaved in order', async () => {
    const p = stubProject()
    p.script({check: ['interleave:40 tokens:77']})
    const r = req(p, 'command', 'helix check action\n')
    const res = await dispatchAgent(r)
    expect(res.tokens).toBe(77)
    const msgs = readLog(r.log.path).filter((x) => x.stream === 'agent').map((x) => x.msg)
    const expected = Array.from({length: 40}, (_, i) => `${(i + 1) % 2 ? 'out' : 'err'} ${i + 1}`)
    expect(msgs.slice(0, 40)).toEqual(expected)
  })

  it('logRange holds exactly the agent lines of that dispatch', async () => {
    const p = stubProject()
    p.script({check: [['print:one', 'print:two']], polish: ['interleave:5']})
    const log = openSessionLog(path.join(p.root, '.helix-logs'))
    log.event('before')
    const a = await dispatchAgent({...req(p, 'command', 'helix check action\n'), log})
    log.event('between')
    const b = await dispatchAgent({...req(p, 'command', 'helix polish action\n'), log, action: 'polish'})
    log.close()
    const lines = readFileSync(log.path, 'utf8').split('\n')
    const slice = (r: {first: number; last: number}) => lines.slice(r.first - 1, r.last).map((l) => JSON.parse(l))
    expect(slice(a.logRange!).map((x) => x.msg)).toEqual(['one', 'print:two'.slice(6)])
    expect(slice(a.logRange!).every((x) => x.stream === 'agent' && x.dispatch === 1)).toBe(true)
    const bs = slice(b.logRange!)
    expect(bs.map((x) => x.msg)).toEqual(['out 1', 'err 2', 'out 3', 'err 4', 'out 5'])
    expect(bs.every((x) => x.stream === 'agent' && x.dispatch === 2)).toBe(true)
    const recs = readLog(log.path)
    expect(recs.find((x) => x.msg === 'dispatch' && x.dispatch === 2)).toMatchObject({action: 'polish'})
    expect(recs.find((x) => x.msg === 'dispatch end' && x.dispatch === 2)).toMatchObject({rc: 0, tokens: 0, timed_out: false})
  })

  it('no output → logRange null', async () => {
    const p = stubProject()
    p.script({check: ['noop']})
    const res = await dispatchAgent(req(p, 'command', 'helix check action\n'))
    expect(res.logRange).toBeNull()
  })

  it('a huge timeout does not overflow into an immediate kill', async () => {
    const p = stubProject()
    p.script({check: ['sleep:200 next:WAIT']})
    const res = await dispatchAgent(req(p, 'command', 'helix check action\n', {timeoutSec: 10_000_000}))
    expect(res.end).not.toBe('timeout')
    expect(res.rc).toBe(0)
  })

  it('the agent finds this helix on PATH even when the user\'s PATH has none', async () => {
    const p = stubProject()
    const {writeFileSync, chmodSync, mkdirSync} = await import('node:fs')
    mkdirSync(path.join(p.root, '.ddx'), {recursive: true})
    writeFileSync(path.join(p.root, '.ddx', 'beads.jsonl'), '{"id":"hx-00000001","title":"t","status":"open"}\n')
    const script = path.join(p.bin, 'which-helix')
    writeFileSync(script, '#!/bin/sh\ncommand -v helix\nhelix tracker status --json\n')
    chmodSync(script, 0o755)
    const saved = {PATH: process.env.PATH, TMPDIR: process.env.TMPDIR}
    process.env.PATH = '/usr/bin:/bin'
    // issue 30: the shim was a cache in TMPDIR that outlived every run (and the suite); now it is the project's
    const tmp = makeTempDir('helix-shim-tmp-')
    process.env.TMPDIR = tmp
    try {
      const r = req(p, 'command', 'x')
      const res = await dispatchAgent({...r, agent: {kind: 'command', name: script, path: script}, env: {NODE_ENV: 'production'}})
      expect(res.rc).toBe(0)
      expect(res.text).toContain(`${path.join(p.root, '.helix', 'bin', 'helix')}\n`)
      expect(res.text).toContain('"total":1')
      expect(readdirSync(tmp)).toEqual([])
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  })

  it('a spawn failure (oversized codex argv, missing cwd) is rc 127 with a reason, not a crash', async () => {
    const p = stubProject()
    const big = await dispatchAgent(req(p, 'codex', 'helix check action\n' + 'x'.repeat(200_000)))
    expect(big.rc).toBe(127)
    expect(big.text).toContain('too long for the command line')
    const nocwd = await dispatchAgent(req(p, 'command', 'x', {root: path.join(p.root, 'missing'), signal: new AbortController().signal}))
    expect(nocwd.rc).toBe(127)
    const ac = new AbortController()
    ac.abort()
    const pre = await dispatchAgent(req(p, 'command', 'x', {signal: ac.signal}))
    expect(pre.end).toBe('aborted')
    expect(p.calls()).toHaveLength(0)
  })

  it('rc is passed through', async () => {
    const p = stubProject()
    p.script({check: ['exit:7']})
    expect((await dispatchAgent(req(p, 'command', 'helix check action\n'))).rc).toBe(7)
  })

  it('a prompt with shell syntax is data, never run', async () => {
    const p = stubProject()
    const prompt = 'helix check action\n$(touch pwned) `touch pwned2` ; touch pwned3\n'
    const res = await dispatchAgent(req(p, 'codex', prompt))
    expect(res.rc).toBe(0)
    expect(p.calls()[0].argv.at(-1)).toBe(prompt)
    for (const f of ['pwned', 'pwned2', 'pwned3']) expect(existsSync(path.join(p.root, f))).toBe(false)
  })

  it('shell syntax in ids, context, prompts and the agent path never runs (every agent kind)', async () => {
    const p = stubProject()
    const {buildPrompt} = await import('../../src/agents/prompts.js')
    const {copyFileSync, chmodSync} = await import('node:fs')
    const prompt = await buildPrompt('implementation', {root: p.root, beadId: '$(touch pwned1)', contextMd: '# HELIX Execution Context\nepic: `touch pwned2` $(touch pwned3)\n'})
    const weird = path.join(p.bin, 'agent $(touch pwned4) `touch pwned5`')
    copyFileSync(p.paths.command, weird)
    chmodSync(weird, 0o755)
    for (const kind of ['codex', 'claude', 'command'] as const) {
      const res = await dispatchAgent(req(p, kind, prompt, {action: 'implementation', beadId: '$(touch pwned6)'}))
      expect(res.rc, kind).toBe(0)
    }
    const res = await dispatchAgent({...req(p, 'command', prompt), agent: {kind: 'command', name: weird, path: weird}})
    expect(res.rc).toBe(0)
    expect(p.calls()).toHaveLength(4)
    for (let i = 1; i <= 6; i++) {
      expect(existsSync(path.join(p.root, `pwned${i}`))).toBe(false)
      expect(existsSync(path.join(p.bin, `pwned${i}`))).toBe(false)
    }
  })

  it('a grandchild holding the pipe after a normal exit does not hang the dispatch and is killed', async () => {
    const p = stubProject()
    p.script({check: ['fork-and-exit']})
    const res = await dispatchAgent(req(p, 'command', 'helix check action\n'))
    expect(res.rc).toBe(0)
    const pid = Number(readFileSync(path.join(p.stubDir, 'pids'), 'utf8').trim())
    expect(isAlive(pid)).toBe(false)
    expect(liveAgentGroups()).toEqual([])
  })

  it('timeout: an agent that ignores SIGTERM and forks is fully gone by timeout + kill grace + slack', async () => {
    const p = stubProject()
    p.script({check: ['hang-ignore-term-fork']})
    // the grace is the request's (SPEC 3 default 10 s); a short one so the test does not pay 10 s
    const r = req(p, 'command', 'helix check action\n', {timeoutSec: 1, killGraceMs: 1000})
    const t0 = Date.now()
    const res = await dispatchAgent(r)
    const elapsed = Date.now() - t0
    r.log.close()
    expect(res.end).toBe('timeout')
    expect(res.rc).not.toBe(0)
    const pids = readFileSync(path.join(p.stubDir, 'pids'), 'utf8').trim().split('\n').map(Number)
    expect(pids).toHaveLength(2)
    for (const pid of pids) expect(isAlive(pid)).toBe(false)
    expect(elapsed).toBeLessThan(1000 + 1000 + 2000)
    const recs = readLog(r.log.path)
    expect(recs.some((x) => /^helix: \[\d\d:\d\d:\d\d\] .+ timeout after 1s — killed$/.test(x.msg))).toBe(true)
    // the timeout message is written after the agent's lines: the range stays pure
    const lines = readFileSync(r.log.path, 'utf8').split('\n')
    for (const l of lines.slice(res.logRange!.first - 1, res.logRange!.last)) expect(JSON.parse(l).stream).toBe('agent')
  }, 30_000)

  it('timeout also kills a grandchild that escaped the group with setsid', async () => {
    const p = stubProject()
    p.script({check: ['hang-setsid-fork']})
    const res = await dispatchAgent(req(p, 'command', 'helix check action\n', {timeoutSec: 1, killGraceMs: 1000}))
    expect(res.end).toBe('timeout')
    const pids = readFileSync(path.join(p.stubDir, 'pids'), 'utf8').trim().split('\n').map(Number)
    expect(pids).toHaveLength(2)
    for (const pid of pids) expect(isAlive(pid)).toBe(false)
  })

  it('killAllAgentGroups reaches the group and its escaped descendants', async () => {
    const p = stubProject()
    p.script({check: ['hang-setsid-fork']})
    const pending = dispatchAgent(req(p, 'command', 'helix check action\n', {timeoutSec: 60}))
    const pidFile = path.join(p.stubDir, 'pids')
    while (!existsSync(pidFile) || readFileSync(pidFile, 'utf8').trim().split('\n').length < 2) await new Promise((r) => setTimeout(r, 20))
    expect(liveAgentGroups()).toHaveLength(1)
    expect(killAllAgentGroups('SIGKILL')).toBe(1)
    const res = await pending
    expect(res.end).not.toBe('timeout')
    expect(res.rc).toBe(137)
    for (const pid of readFileSync(pidFile, 'utf8').trim().split('\n').map(Number)) expect(isAlive(pid)).toBe(false)
    expect(liveAgentGroups()).toEqual([])
  })

  it('abort signal kills the group', async () => {
    const p = stubProject()
    p.script({check: ['hang']})
    const ac = new AbortController()
    const r = req(p, 'claude', 'helix check action\n', {signal: ac.signal, killGraceMs: 500})
    const pending = dispatchAgent(r)
    while (p.calls().length === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    ac.abort()
    const res = await pending
    expect(res.end).toBe('aborted')
    expect(res.end).not.toBe('timeout')
    expect(isAlive(p.calls()[0].pid)).toBe(false)
  })
})
