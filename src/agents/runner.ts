/**
 * Running one agent (SPEC 3): exact argv per agent kind, project root as cwd,
 * helix's environment plus HELIX_* variables, its own process group, stdout and
 * stderr through ONE pipe (so their order is kept), output line-buffered into
 * the session log, a timeout that kills the whole group, and a registry of live
 * groups so no agent process outlives helix.
 */
import {spawn} from 'node:child_process'
import {readFileSync, readdirSync} from 'node:fs'
import {constants as osConstants} from 'node:os'
import {StringDecoder} from 'node:string_decoder'
import {claudeDecoder, codexDecoder, commandDecoder, type OutputDecoder} from './output.js'
import {defaultEffort} from './resolve.js'
import type {AgentRunner, DispatchRequest, DispatchResult, SessionLogLike} from './types.js'

export interface Invocation {
  file: string
  args: string[]
  stdin: 'ignore' | {input: string}
}

/** The exact command of SPEC 3 for `req` (effort defaults per action). */
export function buildInvocation(req: Pick<DispatchRequest, 'agent' | 'action' | 'prompt' | 'root' | 'model' | 'effort'>): Invocation {
  const effort = req.effort ?? defaultEffort(req.action)
  switch (req.agent.kind) {
    case 'codex': {
      const args = ['--dangerously-bypass-approvals-and-sandbox', 'exec', '-C', req.root]
      if (req.model) args.push('-m', req.model)
      if (effort) args.push('-c', `reasoning.effort=${effort}`)
      args.push('--ephemeral', req.prompt)
      return {file: req.agent.path, args, stdin: 'ignore'}
    }
    case 'claude': {
      const args = ['-p', '--permission-mode', 'bypassPermissions', '--dangerously-skip-permissions', '--no-session-persistence']
      if (req.model) args.push('--model', req.model)
      if (effort) args.push('--effort', effort)
      args.push('--output-format', 'stream-json', '--verbose')
      return {file: req.agent.path, args, stdin: {input: req.prompt}}
    }
    default:
      return {file: req.agent.path, args: [], stdin: {input: req.prompt}}
  }
}

/** Quote one argument for display (POSIX shell single quotes). Display only: nothing is ever run through a shell. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg
  return `'${arg.replace(/'/g, `'\\''`)}'`
}

/**
 * The `--dry-run` text: the command line (a prompt passed as the last argv is
 * shown as `<prompt>`), where stdin comes from, the cwd, then the prompt itself.
 */
export function formatDryRun(inv: Invocation, prompt: string, root: string): string {
  const args = inv.stdin === 'ignore' && inv.args.at(-1) === prompt ? [...inv.args.slice(0, -1).map(shellQuote), '<prompt>'] : inv.args.map(shellQuote)
  return [
    `command: ${[shellQuote(inv.file), ...args].join(' ')}`,
    `cwd: ${root}`,
    `stdin: ${inv.stdin === 'ignore' ? '/dev/null' : '<prompt>'}`,
    '--- prompt ---',
    prompt.endsWith('\n') ? prompt.slice(0, -1) : prompt,
    '--- end prompt ---',
  ].join('\n') + '\n'
}

function hhmmss(d: Date): string {
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':')
}

/** SPEC 3: `helix: [t] <agent> timeout after Ns — killed`. */
export function timeoutMessage(agentName: string, seconds: number, now: Date = new Date()): string {
  return `helix: [${hhmmss(now)}] ${agentName} timeout after ${seconds}s — killed`
}

// ------------------------------------------------------------ process groups

const liveGroups = new Set<number>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // Last line of defence: whatever way helix exits, its agents go with it.
  process.on('exit', () => killAllAgentGroups('SIGKILL'))
}

function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

/** Process ids in group `pgid` that are alive (not zombies). Linux reads /proc; elsewhere kill(-pgid, 0). */
export function liveGroupMembers(pgid: number): number[] {
  // fast path: an empty group answers ESRCH without scanning /proc
  try {
    process.kill(-pgid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return []
  }
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return [pgid] // no /proc (not Linux): the group answered kill(0), so something is in it
  }
  const out: number[] = []
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8')
    } catch {
      continue
    }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // rest[0] = state, rest[1] = ppid, rest[2] = pgrp
    if (Number(rest[2]) === pgid && rest[0] !== 'Z' && rest[0] !== 'X') out.push(Number(e))
  }
  return out
}

/** Process-group ids of the agents running now. */
export function liveAgentGroups(): number[] {
  return [...liveGroups]
}

/**
 * Send `signal` to every live agent process group (helix's own SIGINT/SIGTERM
 * handler calls this; the pending dispatches then resolve). Returns how many
 * groups were signalled.
 */
export function killAllAgentGroups(signal: NodeJS.Signals = 'SIGTERM'): number {
  let n = 0
  for (const pgid of liveGroups) if (signalGroup(pgid, signal)) n++
  return n
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

// ---------------------------------------------------------------- dispatching

const dispatchCounters = new WeakMap<SessionLogLike, number>()
function nextDispatchNumber(log: SessionLogLike): number {
  const n = (dispatchCounters.get(log) ?? 0) + 1
  dispatchCounters.set(log, n)
  return n
}

const DRAIN_MS = 1000
const STRAGGLER_GRACE_MS = 1000

function decoderFor(kind: DispatchRequest['agent']['kind']): OutputDecoder {
  return kind === 'codex' ? codexDecoder() : kind === 'claude' ? claudeDecoder() : commandDecoder()
}

/**
 * Run one agent to completion. Never rejects for agent failures: a spawn
 * error is rc 127, a signal death is 128+signal, a timeout sets `timedOut`.
 */
export function dispatchAgent(req: DispatchRequest): Promise<DispatchResult> {
  const started = Date.now()
  const log = req.log
  const n = nextDispatchNumber(log)
  const inv = buildInvocation(req)
  const argv = [inv.file, ...inv.args]
  const graceMs = req.killGraceMs ?? 10_000
  const decoder = decoderFor(req.agent.kind)

  const logArgv = inv.stdin === 'ignore' && inv.args.at(-1) === req.prompt ? [...argv.slice(0, -1), '<prompt>'] : argv
  log.event('dispatch', {dispatch: n, action: req.action, agent: req.agent.name, argv: logArgv})
  // the prompt's size and first line only: whole prompts would swamp `helix logs` (`--dry-run` reproduces them)
  log.event('prompt', {dispatch: n, chars: req.prompt.length, first_line: req.prompt.split('\n', 1)[0].slice(0, 200)}, 'debug')

  const env: NodeJS.ProcessEnv = {...process.env, ...(req.env ?? {})}
  for (const k of ['HELIX_BEAD_ID', 'HELIX_CLAIM_TOKEN'] as const) delete env[k]
  if (req.beadId) env.HELIX_BEAD_ID = req.beadId
  if (req.claimToken) env.HELIX_CLAIM_TOKEN = req.claimToken
  env.HELIX_ACTION = req.action
  env.HELIX_RUN_LOG = log.path

  let first = 0
  let last = 0
  const record = (line: string) => {
    const decoded = decoder.push(line)
    for (const l of decoded.log) {
      log.agentLine(l, {dispatch: n})
      if (first === 0) first = log.lines
      last = log.lines
    }
    if (req.onLine) for (const l of decoded.show) req.onLine(l)
  }

  return new Promise<DispatchResult>((resolve) => {
    let timedOut = false
    let aborted = false
    let killDeadline = 0
    let timeoutTimer: NodeJS.Timeout | undefined
    let killTimer: NodeJS.Timeout | undefined
    let finished = false

    const finish = (rc: number) => {
      if (finished) return
      finished = true
      if (timeoutTimer) clearTimeout(timeoutTimer)
      if (killTimer) clearTimeout(killTimer)
      req.signal?.removeEventListener('abort', onAbort)
      const durationMs = Date.now() - started
      if (timedOut) log.event(timeoutMessage(req.agent.name, req.timeoutSec), {dispatch: n}, 'warn')
      if (aborted) log.event(`helix: ${req.agent.name} interrupted — killed`, {dispatch: n}, 'warn')
      const tokens = decoder.tokens()
      log.event('dispatch end', {dispatch: n, rc, tokens, duration_ms: durationMs, timed_out: timedOut})
      resolve({
        rc,
        timedOut,
        aborted,
        text: decoder.text(),
        tokens,
        durationMs,
        logRange: first > 0 ? {first, last} : null,
        argv,
        dispatch: n,
      })
    }

    if (req.signal?.aborted) {
      aborted = true
      finish(130)
      return
    }

    // One pipe for stdout and stderr: a constant script execs the agent with
    // fd 2 pointed at fd 1. The agent's argv travels as positional parameters
    // ("$0" "$@"), never interpolated into shell text.
    const child = spawn('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', inv.file, ...inv.args], {
      cwd: req.root,
      env,
      detached: true,
      stdio: [inv.stdin === 'ignore' ? 'ignore' : 'pipe', 'pipe', 'ignore'],
    })
    const pgid = child.pid
    if (pgid === undefined) {
      child.on('error', () => {})
      record(`helix: cannot start ${req.agent.name}`)
      finish(127)
      return
    }
    liveGroups.add(pgid)
    installExitHook()

    const killGroup = (why: 'timeout' | 'abort') => {
      if (why === 'timeout') timedOut = true
      else aborted = true
      if (killDeadline) return
      killDeadline = Date.now() + graceMs
      signalGroup(pgid, 'SIGTERM')
      killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), graceMs)
    }
    const onAbort = () => killGroup('abort')
    req.signal?.addEventListener('abort', onAbort, {once: true})
    // setTimeout overflows past 2^31-1 ms (≈ 24.8 days) and would fire at once: clamp
    timeoutTimer = setTimeout(() => killGroup('timeout'), Math.min(2 ** 31 - 1, Math.max(1, req.timeoutSec * 1000)))

    if (inv.stdin !== 'ignore' && child.stdin) {
      child.stdin.on('error', () => {}) // an agent that never reads its stdin is fine
      child.stdin.end(inv.stdin.input)
    }

    const decoderUtf8 = new StringDecoder('utf8')
    let partial = ''
    const onData = (chunk: Buffer) => {
      const text = partial + decoderUtf8.write(chunk)
      const parts = text.split('\n')
      partial = parts.pop() ?? ''
      for (const p of parts) record(p.endsWith('\r') ? p.slice(0, -1) : p)
    }
    const out = child.stdout!
    out.on('data', onData)
    let streamClosed = false
    const streamDone = new Promise<void>((r) => {
      out.once('close', () => {
        streamClosed = true
        r()
      })
      out.once('error', () => r())
    })

    let spawnError = false
    child.once('error', () => {
      spawnError = true
    })

    child.once('close', () => {}) // keep node from warning; we use 'exit'
    child.once('exit', async (code, signal) => {
      // The agent is gone. Anything left in its group (a forked helper, a
      // grandchild holding the pipe) is killed: SIGTERM now, SIGKILL at the
      // timeout's deadline or after a short grace.
      let members = liveGroupMembers(pgid)
      if (members.length > 0) {
        signalGroup(pgid, 'SIGTERM')
        const until = killDeadline || Date.now() + Math.min(graceMs, STRAGGLER_GRACE_MS)
        while (members.length > 0 && Date.now() < until) {
          await sleep(50)
          members = liveGroupMembers(pgid)
        }
        if (members.length > 0) signalGroup(pgid, 'SIGKILL')
      }
      // bounded drain: whatever is still in the pipe, then stop listening
      if (!streamClosed) await Promise.race([streamDone, sleep(DRAIN_MS)])
      out.off('data', onData)
      out.destroy()
      const rest = partial + decoderUtf8.end()
      if (rest !== '') record(rest)
      liveGroups.delete(pgid)
      let rc: number
      if (spawnError) rc = 127
      else if (code !== null) rc = code
      else rc = 128 + ((signal && osConstants.signals[signal]) || 9)
      finish(rc)
    })
  })
}

export function createAgentRunner(): AgentRunner {
  return {dispatch: dispatchAgent}
}
