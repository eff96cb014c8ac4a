/**
 * The runner's process side with real processes (SPEC 14.4, 14.5): dispatch ids
 * in the agent's environment, every tagged process ended at the end of the
 * dispatch (double-forked setsid escapees included), the stall guard, the kill
 * grace override, and linear, bounded output with `…[cut N bytes]`.
 */
import {chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync, realpathSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createLineSplitter} from '../../src/agents/line-splitter.js'
import {dispatchAgent, newDispatchId} from '../../src/agents/runner.js'
import {liveAgentGroups} from '../../src/proc/groups.js'
import type {DispatchRequest} from '../../src/agents/types.js'
import {openSessionLog} from '../../src/output/session-log.js'
import {currentStartToken} from '../../src/proc/process-probe.js'
import {processesOfDispatch} from '../../src/proc/tagged.js'
import {pidAlive} from '../../src/proc/process.js'
import {makeTempDir, trackProcess} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'

// SPEC 14.1/14.4: the codex decoder marks start events and Reconnecting notices as non-progress (decoder branch)


interface Agent {
  root: string
  dir: string
  file: string
}

/** A command agent written as a shell script; `dir` (AGENT_DIR) is where it leaves pids and state. */
function agent(body: string): Agent {
  const base = makeTempDir('helix-runner-proc-')
  const root = path.join(base, 'proj')
  const dir = path.join(base, 'state')
  mkdirSync(root)
  mkdirSync(dir)
  const file = path.join(base, 'agent.sh')
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return {root, dir, file}
}

function req(a: Agent, extra: Partial<DispatchRequest> = {}): DispatchRequest {
  return {
    agent: {kind: 'command', name: a.file, path: a.file},
    action: 'check',
    prompt: 'helix check action\n',
    root: a.root,
    timeoutSec: 30,
    env: {AGENT_DIR: a.dir, HELIX_KILL_GRACE_MS: '300'},
    log: openSessionLog(path.join(a.root, '.helix-logs')),
    ...extra,
  }
}

function readPid(file: string): number {
  const pid = Number(readFileSync(file, 'utf8').trim())
  trackProcess(pid)
  return pid
}

function envOf(pid: number): Record<string, string> {
  const out: Record<string, string> = {}
  for (const kv of readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0')) {
    const i = kv.indexOf('=')
    if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1)
  }
  return out
}

function agentLines(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((r) => r.stream === 'agent')
    .map((r) => r.msg as string)
}

// A double fork: the sleeper's parent exits at once, so the sleeper is
// re-parented (no tree links it to the agent) and in its own session (no group
// kill reaches it). Only its dispatch id finds it.
const DOUBLE_FORK = `setsid sh -c 'sleep 300 </dev/null >/dev/null 2>&1 & echo $! > "$AGENT_DIR/escapee"'`

describe('HELIX_DISPATCH_ID (SPEC 14.5)', () => {
  it('the agent runs with a dispatch id, HELIX_RUN_PID, HELIX_RUN_START and HELIX_PROJECT; claim-token ids for implementation', async () => {
    const a = agent('cat >/dev/null; env | grep "^HELIX_\\(DISPATCH_ID\\|RUN_PID\\|RUN_START\\|PROJECT\\)=" | sort')
    const impl = await dispatchAgent(req(a, {action: 'implementation', claimToken: 'abc123', beadId: 'hx-1'}))
    expect(impl.rc).toBe(0)
    // SPEC 18.3a: the project root's real path, whatever the agent's cwd
    expect(impl.text).toContain(`HELIX_PROJECT=${realpathSync(a.root)}`)
    expect(impl.dispatchId).toMatch(/^abc123\.\d+$/)
    expect(impl.text).toContain(`HELIX_DISPATCH_ID=${impl.dispatchId}`)
    expect(impl.text).toContain(`HELIX_RUN_PID=${process.pid}`)
    expect(impl.text).toContain(`HELIX_RUN_START=${currentStartToken()}`)

    const check = await dispatchAgent(req(a))
    expect(check.dispatchId).toMatch(new RegExp(`^h${process.pid}-[0-9a-f]{8}\\.\\d+$`))
    expect(check.dispatchId).not.toBe(impl.dispatchId)
    const given = await dispatchAgent(req(a, {dispatchId: 'given-id.7'}))
    expect(given.dispatchId).toBe('given-id.7')
    expect(given.text).toContain('HELIX_DISPATCH_ID=given-id.7')
  })

  it('ids never repeat; a claim token that is not a plain token is not used as a prefix', () => {
    const ids = new Set(Array.from({length: 50}, () => newDispatchId({action: 'implementation', claimToken: 'tok'})))
    expect(ids.size).toBe(50)
    expect(newDispatchId({action: 'implementation', claimToken: 'a b;$(x)'})).toMatch(/^h\d+-/)
    expect(newDispatchId({action: 'review', claimToken: 'tok'})).toMatch(/^h\d+-/)
  })

  it('a normal exit ends a double-forked setsid escapee (found only by its dispatch id)', async () => {
    const a = agent(`cat >/dev/null; ${DOUBLE_FORK}; echo forked`)
    const res = await dispatchAgent(req(a))
    expect(res.rc).toBe(0)
    const escapee = readPid(path.join(a.dir, 'escapee'))
    expect(pidAlive(escapee)).toBe(false)
    expect(processesOfDispatch(res.dispatchId!)).toEqual([])
    expect(liveAgentGroups()).toEqual([])
  })

  it('a timeout ends the escapee too', async () => {
    const a = agent(`cat >/dev/null; ${DOUBLE_FORK}; echo $$ > "$AGENT_DIR/agent"; exec sleep 300`)
    const t0 = Date.now()
    const res = await dispatchAgent(req(a, {timeoutSec: 1}))
    expect(res.end).toBe('timeout')
    expect(Date.now() - t0).toBeLessThan(5000)
    for (const f of ['escapee', 'agent']) expect(pidAlive(readPid(path.join(a.dir, f)))).toBe(false)
    expect(processesOfDispatch(res.dispatchId!)).toEqual([])
  })

  it('an abort (helix interrupted) ends the escapee too', async () => {
    const a = agent(`cat >/dev/null; ${DOUBLE_FORK}; exec sleep 300`)
    const ac = new AbortController()
    const pending = dispatchAgent(req(a, {signal: ac.signal}))
    const escFile = path.join(a.dir, 'escapee')
    await waitFor(() => existsSync(escFile) && readFileSync(escFile, 'utf8').trim() !== '')
    const escapee = readPid(escFile)
    expect(pidAlive(escapee)).toBe(true)
    expect(envOf(escapee).HELIX_DISPATCH_ID).toMatch(/^h\d+-/)
    ac.abort()
    const res = await pending
    expect(res.end).toBe('aborted')
    expect(pidAlive(escapee)).toBe(false)
  })
})

describe('watchdog', () => {
  it('leaves the agent alone while helix lives (its start token matches), and is gone with the dispatch', async () => {
    // the watchdog polls once a second: 2.5 s covers its first checks
    const a = agent(`cat >/dev/null; sleep 2.5; echo survived`)
    const res = await dispatchAgent(req(a))
    expect(res.rc).toBe(0)
    expect(res.text).toContain('survived')
    expect(processesOfDispatch(res.dispatchId!)).toEqual([])
  })
})

describe('kill grace (HELIX_KILL_GRACE_MS)', () => {
  it('a SIGTERM-ignoring agent dies after the override, not after 10 s', async () => {
    const a = agent(`trap '' TERM; cat >/dev/null; echo $$ > "$AGENT_DIR/agent"; while :; do sleep 0.05; done`)
    const t0 = Date.now()
    const res = await dispatchAgent(req(a, {timeoutSec: 1, env: {AGENT_DIR: a.dir, HELIX_KILL_GRACE_MS: '400'}}))
    const elapsed = Date.now() - t0
    expect(res.end).toBe('timeout')
    expect(res.rc).toBe(137) // it ignored SIGTERM: SIGKILL ended it
    expect(pidAlive(readPid(path.join(a.dir, 'agent')))).toBe(false)
    expect(elapsed).toBeGreaterThanOrEqual(1400)
    expect(elapsed).toBeLessThan(4000)
  })
})

describe('stall guard (SPEC 14.4)', () => {
  it('an agent that prints nothing is killed after stallTimeoutSec: stalled, not timed out', async () => {
    const a = agent(`cat >/dev/null; echo started; echo $$ > "$AGENT_DIR/agent"; exec sleep 300`)
    const r = req(a, {stallTimeoutSec: 1})
    const t0 = Date.now()
    const res = await dispatchAgent(r)
    expect(res.end).toBe('stalled')
    expect(res.end).not.toBe('timeout')
    expect(res.rc).not.toBe(0)
    expect(Date.now() - t0).toBeLessThan(5000)
    expect(pidAlive(readPid(path.join(a.dir, 'agent')))).toBe(false)
    const recs = readFileSync(r.log.path, 'utf8')
    expect(recs).toMatch(/stalled: no output for 1s — killed/)
  })

  it('only non-progress output (codex start events, Reconnecting notices) is a stall', async () => {
    const a = agent(
      `echo '{"type":"thread.started","thread_id":"t"}'; echo '{"type":"turn.started"}'; echo $$ > "$AGENT_DIR/agent"; ` +
        `while :; do echo '{"type":"error","message":"Reconnecting... 1/5"}'; sleep 0.2; done`,
    )
    const res = await dispatchAgent(req(a, {agent: {kind: 'codex', name: 'codex', path: a.file}, stallTimeoutSec: 1}))
    expect(res.end).toBe('stalled')
    expect(pidAlive(readPid(path.join(a.dir, 'agent')))).toBe(false)
  })

  it('output lines are progress: a slow but steady agent is not stalled', async () => {
    const a = agent(`cat >/dev/null; for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.3; done`)
    const res = await dispatchAgent(req(a, {stallTimeoutSec: 1}))
    expect(res.end).not.toBe('stalled')
    expect(res.rc).toBe(0)
    expect(res.text).toContain('tick 6')
  })

  it('0 disables the guard', async () => {
    const a = agent(`cat >/dev/null; sleep 1.3; echo done`)
    const res = await dispatchAgent(req(a, {stallTimeoutSec: 0}))
    expect(res.end).not.toBe('stalled')
    expect(res.text).toContain('done')
  })
})

describe('bounded output (SPEC 14.5)', () => {
  it('a line over 1 MiB is cut in the session log with …[cut N bytes]; order of stdout/stderr lines stays exact', async () => {
    // 3 MiB + 5 bytes of 'x' on stdout between ordered stdout/stderr lines
    const big = 3 * 1024 * 1024 + 5
    const a = agent(
      `cat >/dev/null; echo out 1; echo err 2 >&2; head -c ${big} /dev/zero | tr '\\0' x; echo; echo err 3 >&2; echo out 4`,
    )
    const r = req(a)
    const res = await dispatchAgent(r)
    expect(res.rc).toBe(0)
    const lines = agentLines(r.log.path)
    expect(lines).toHaveLength(5)
    expect(lines[0]).toBe('out 1')
    expect(lines[1]).toBe('err 2')
    expect(lines[2]).toBe('x'.repeat(1024 * 1024) + `…[cut ${big - 1024 * 1024} bytes]`)
    expect(lines.slice(3)).toEqual(['err 3', 'out 4'])
    expect(res.text).toContain(`…[cut ${big - 1024 * 1024} bytes]`)
  })

  it('splitter: lines across chunks, CRLF, a last line without newline, cuts on a character boundary', () => {
    const out: string[] = []
    const s = createLineSplitter((l) => out.push(l), 8)
    s.push(Buffer.from('ab'))
    s.push(Buffer.from('c\r\nde'))
    s.push(Buffer.from('\n\n'))
    // 'é' is 2 bytes: 7 ASCII + é would straddle the 8-byte cut → the whole é is cut
    s.push(Buffer.from('1234567é9\n'))
    s.push(Buffer.from('tail'))
    s.end()
    expect(out).toEqual(['abc', 'de', '', '1234567…[cut 3 bytes]', 'tail'])
  })

  it('splitter is linear: a 64 MiB line in 64 KiB chunks is handled in well under the quadratic time', () => {
    const out: string[] = []
    const s = createLineSplitter((l) => out.push(l))
    const chunk = Buffer.alloc(64 * 1024, 0x61)
    for (let i = 0; i < 1024; i++) s.push(chunk)
    s.push(Buffer.from('\n'))
    expect(out).toHaveLength(1)
    expect(out[0].endsWith(`…[cut ${64 * 1024 * 1024 - 1024 * 1024} bytes]`)).toBe(true)
  })
})
