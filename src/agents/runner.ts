/**
 * Running one agent (SPEC 3): project root as cwd, helix's environment plus
 * HELIX_* variables, its own process group, stdout and stderr through ONE pipe
 * (so their order is kept), output line-buffered into the session log, and a
 * timeout, stall guard and abort that end the whole group.
 *
 * One dispatch is ONE explicit state machine:
 *
 *   running ──timeout/stall/abort──► killing ──exit──► exited ──► finished
 *      └───────────────────────exit──────────────────────┘
 *   (never started: spawn-failed, or aborted before the spawn → finished)
 *
 * `step(event)` moves it with an exhaustive switch; the result's `end` is read
 * off the final state, so "timed out", "stalled" and "aborted" are decided once.
 * The argv is in invocation.ts, the group registry in proc/groups.ts, the PATH
 * shim in shim.ts and the line splitter in line-splitter.ts.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import path from 'node:path'
import {fencedEnv} from '../git/run.js'
import {currentStartToken, startTokenOf} from '../proc/process-probe.js'
import {forgetGroup, registerGroup} from '../proc/groups.js'
import {projectTag} from '../proc/tagged.js'
import {endProcesses, escapedDescendants, killGraceMs, processTable, signalExitCode, signalTarget, type ProcEntry} from '../proc/process.js'
import {errorMessage} from '../util/errors.js'
import {hhmmss} from '../util/time.js'
import {buildInvocation, type Invocation} from './invocation.js'
import {neverWorked, quotaOutlived, stallMessage, timeoutMessage} from './judge.js'
import {createLineSplitter} from './line-splitter.js'
import {claudeDecoder, codexDecoder, commandDecoder, type OutputDecoder} from './output.js'
import {helixShimDir} from './shim.js'
import {PLAIN_VERDICT, type AgentVerdict, type DispatchEnd, type DispatchRequest, type DispatchResult, type SessionLogLike} from './types.js'
import {AGENT_WRAPPER} from './watchdog.js'

const dispatchCounters = new WeakMap<SessionLogLike, number>()
function nextDispatchNumber(log: SessionLogLike): number {
  const n = (dispatchCounters.get(log) ?? 0) + 1
  dispatchCounters.set(log, n)
  return n
}

/** unique for this helix process: `h<pid>-<random>`; the prefix of its dispatch ids that have no claim token */
const PROCESS_TAG = `h${process.pid}-${randomBytes(4).toString('hex')}`
let dispatchSerial = 0

/**
 * A fresh HELIX_DISPATCH_ID (SPEC 13.3, 14.5): `<claim-token>.<n>` for an
 * implementation dispatch holding a claim (so the claim's processes are the
 * ones whose id begins with its token), else `<process tag>.<n>`. `n` counts
 * this process's dispatches, so ids never repeat within a run.
 */
export function newDispatchId(req: Pick<DispatchRequest, 'action' | 'claimToken'>): string {
  dispatchSerial++
  const token = req.action === 'implementation' && req.claimToken && /^[A-Za-z0-9_-]{1,128}$/.test(req.claimToken) ? req.claimToken : PROCESS_TAG
  return `${token}.${dispatchSerial}`
}

const DRAIN_MS = 1000
const STRAGGLER_GRACE_MS = 1000
/** setTimeout overflows past 2^31-1 ms (≈ 24.8 days) and would fire at once: clamp */
const MAX_TIMER_MS = 2 ** 31 - 1

function decoderFor(kind: DispatchRequest['agent']['kind']): OutputDecoder {
  return kind === 'codex' ? codexDecoder() : kind === 'claude' ? claudeDecoder() : commandDecoder()
}

/** why helix ends a running agent */
type KillCause = 'timeout' | 'stalled' | 'aborted'

/** The states of one dispatch. */
type DispatchState =
  /** the agent runs; the timeout, stall guard and abort are armed */
  | {kind: 'running'}
  /** helix sent SIGTERM to the dispatch for `cause`; SIGKILL follows at `deadline` */
  | {kind: 'killing'; cause: KillCause; deadline: number}
  /** the agent is gone; stragglers are ended and the pipe drained (`cause` when helix killed it) */
  | {kind: 'exited'; cause: KillCause | null; deadline: number}
  /** the result is out */
  | {kind: 'finished'; end: DispatchEnd; rc: number}

type DispatchEvent =
  | {kind: 'kill'; cause: KillCause}
  | {kind: 'exit'}
  | {kind: 'settled'; rc: number}
  | {kind: 'spawn-failed'; why: string}

/**
 * Run one agent to completion. Never rejects for agent failures: a spawn
 * error ends as `spawn-failed` (rc 127), a signal death is 128+signal, a
 * timeout / stall / abort ends as such. When the dispatch ends, for any reason,
 * its process group and every process carrying its HELIX_DISPATCH_ID are ended
 * (SIGTERM, SIGKILL after the grace).
 */
export function dispatchAgent(req: DispatchRequest): Promise<DispatchResult> {
  const started = Date.now()
  const log = req.log
  const n = nextDispatchNumber(log)
  const inv = buildInvocation(req)
  const argv = [inv.file, ...inv.args]
  const graceMs = req.killGraceMs ?? killGraceMs({...process.env, ...(req.env ?? {})})
  const stallMs = req.stallTimeoutSec && req.stallTimeoutSec > 0 ? req.stallTimeoutSec * 1000 : 0
  const decoder = decoderFor(req.agent.kind)
  const dispatchId = req.dispatchId || newDispatchId(req)

  const logArgv = inv.stdin === 'ignore' && inv.args.at(-1) === req.prompt ? [...argv.slice(0, -1), '<prompt>'] : argv
  // SPEC 15.4: with --workers > 1 every record of this dispatch names its slot and bead, so
  // `helix logs --lines A-B --slot wN` can pick one slot's records out of the interleaved log
  const tag: {dispatch: number; slot?: number; bead?: string} =
    req.slot !== undefined ? {dispatch: n, slot: req.slot, ...(req.beadId ? {bead: req.beadId} : {})} : {dispatch: n}
  log.event('dispatch', {...tag, action: req.action, agent: req.agent.name, argv: logArgv, dispatch_id: dispatchId})
  // the prompt's size and first line only: whole prompts would swamp `helix logs` (`--dry-run` reproduces them)
  log.event('prompt', {...tag, chars: req.prompt.length, first_line: req.prompt.split('\n', 1)[0].slice(0, 200)}, 'debug')

  let first = 0
  let last = 0
  let lastProgress = Date.now()
  const record = (line: string) => {
    const decoded = decoder.push(line)
    if (decoded.progress !== false) lastProgress = Date.now()
    for (const l of decoded.log) {
      log.agentLine(l, tag)
      if (first === 0) first = log.lines
      last = log.lines
    }
    if (req.onLine) for (const l of decoded.show) req.onLine(l)
  }

  return new Promise<DispatchResult>((resolve) => {
    let state: DispatchState = {kind: 'running'}
    const timers: {timeout?: NodeJS.Timeout; stall?: NodeJS.Timeout; kill?: NodeJS.Timeout} = {}
    let target: {pgid: number; dispatchId: string; pids: Set<number>; since?: number} | null = null
    const onAbort = () => step({kind: 'kill', cause: 'aborted'})

    const clearTimers = () => {
      for (const t of [timers.timeout, timers.stall, timers.kill]) if (t) clearTimeout(t)
    }
    const collectEscapees = (table?: ProcEntry[] | null) => {
      if (target) for (const pid of escapedDescendants(target.pgid, target.pgid, table)) target.pids.add(pid)
    }
    const beginKill = (deadline: number) => {
      collectEscapees()
      if (target) signalTarget(target, 'SIGTERM')
      timers.kill = setTimeout(() => {
        collectEscapees()
        if (target) signalTarget(target, 'SIGKILL')
      }, Math.max(0, deadline - Date.now()))
    }

    /** the one transition function: every change of state goes through here */
    const step = (ev: DispatchEvent): void => {
      const s = state
      switch (s.kind) {
        case 'running':
          if (ev.kind === 'kill') {
            const deadline = Date.now() + graceMs
            state = {kind: 'killing', cause: ev.cause, deadline}
            beginKill(deadline)
          } else if (ev.kind === 'exit') {
            if (timers.stall) clearTimeout(timers.stall)
            state = {kind: 'exited', cause: null, deadline: Date.now() + Math.min(graceMs, STRAGGLER_GRACE_MS)}
          } else if (ev.kind === 'spawn-failed') finish({end: 'spawn-failed', why: ev.why}, 127)
          else finish({end: 'exited'}, ev.rc) // settled without an exit event: a cleanup failure
          return
        case 'killing':
          // an interrupt during a timeout's grace is still an interrupt (the run is stopping)
          if (ev.kind === 'kill' && ev.cause === 'aborted') state = {...s, cause: 'aborted'}
          else if (ev.kind === 'exit') state = {kind: 'exited', cause: s.cause, deadline: s.deadline}
          else if (ev.kind === 'settled') finish(endOf(s.cause), ev.rc)
          else if (ev.kind === 'spawn-failed') finish({end: 'spawn-failed', why: ev.why}, 127)
          return
        case 'exited':
          if (ev.kind === 'kill' && ev.cause === 'aborted' && s.cause !== null) state = {...s, cause: 'aborted'}
          else if (ev.kind === 'settled') finish(s.cause ? endOf(s.cause) : {end: 'exited'}, ev.rc)
          else if (ev.kind === 'spawn-failed') finish({end: 'spawn-failed', why: ev.why}, 127)
          return
        case 'finished':
          return
        default:
          assertNever(s)
      }
    }

    const endOf = (cause: KillCause): DispatchEnd => {
      switch (cause) {
        case 'timeout':
          return {end: 'timeout', afterSec: req.timeoutSec}
        case 'stalled':
          return {end: 'stalled', afterSec: req.stallTimeoutSec ?? 0}
        case 'aborted':
          return {end: 'aborted'}
        default:
          return assertNever(cause)
      }
    }

    const finish = (end: DispatchEnd, rc: number) => {
      state = {kind: 'finished', end, rc}
      clearTimers()
      req.signal?.removeEventListener('abort', onAbort)
      const durationMs = Date.now() - started
      switch (end.end) {
        case 'timeout':
          log.event(timeoutMessage(req.agent.name, req.timeoutSec), tag, 'warn')
          break
        case 'stalled':
          log.event(`helix: [${hhmmss(new Date())}] ${req.agent.name} ${stallMessage(end.afterSec)} — killed`, tag, 'warn')
          break
        case 'aborted':
          log.event(`helix: ${req.agent.name} interrupted — killed`, tag, 'warn')
          break
        case 'exited':
        case 'spawn-failed':
          break
        default:
          assertNever(end)
      }
      const tokens = decoder.tokens()
      const decoded = verdictOf(decoder)
      const offline = neverWorked(end, decoded)
      const verdict = offline ? {...decoded, health: offline} : quotaOutlived(end, rc, decoded) ? {...decoded, health: {kind: 'ok' as const}} : decoded
      if (quotaOutlived(end, rc, decoded)) log.event('quota signal outlived: the call succeeded', {...tag, health: decoded.health})
      log.event('dispatch end', {...tag, rc, end: end.end, tokens, duration_ms: durationMs, timed_out: end.end === 'timeout', ...(verdict.health.kind !== 'ok' ? {health: verdict.health} : {})})
      resolve({...end, dispatchId, rc, text: decoder.text(), tokens, durationMs, logRange: first > 0 ? {first, last} : null, argv, dispatch: n, verdict})
    }

    if (req.signal?.aborted) {
      finish({end: 'aborted'}, signalExitCode('SIGINT'))
      return
    }

    // spawn can fail synchronously (E2BIG: one argv string is limited to 128 KiB on
    // Linux, which a huge codex prompt can exceed) or asynchronously (bad cwd)
    const spawnFailed = (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'E2BIG'
          ? `the prompt (${Buffer.byteLength(req.prompt)} bytes) is too long for the command line`
          : err.code === 'ENOENT'
            ? `cwd ${req.cwd ?? req.root} or /bin/sh does not exist`
            : err.message
      record(`helix: cannot start ${req.agent.name}: ${why}`)
      step({kind: 'spawn-failed', why})
    }
    let child: ChildProcess
    try {
      child = spawnAgent(req, inv, dispatchId, log.path)
    } catch (err) {
      spawnFailed(err as NodeJS.ErrnoException)
      return
    }
    const pgid = child.pid
    if (pgid === undefined) {
      child.once('error', spawnFailed)
      return
    }
    // descendants that left the group (setsid) are tracked by pid from the
    // moment of the kill, while the process tree still links them to the agent;
    // the ones whose parent is already gone are found by their dispatch id
    const escapees = new Set<number>()
    registerGroup(pgid, {escapees, dispatchId})
    // the wrapper's start time: every process that can carry this dispatch id started no earlier
    const start = startTokenOf(pgid)
    target = {pgid, dispatchId, pids: escapees, ...(start !== undefined && /^\d+$/.test(start) ? {since: Number(start)} : {})}
    if (req.onSpawn) {
      // the wrapper execs the agent, so the group leader's pid is the agent's pid
      try {
        req.onSpawn(pgid)
      } catch (error) {
        log.event('onSpawn failed', {...tag, error: errorMessage(error)}, 'warn')
      }
    }

    req.signal?.addEventListener('abort', onAbort, {once: true})
    timers.timeout = setTimeout(() => step({kind: 'kill', cause: 'timeout'}), Math.min(MAX_TIMER_MS, Math.max(1, req.timeoutSec * 1000)))
    if (stallMs > 0) {
      // re-armed lazily: one timer per stall window, not one per output line
      const checkStall = () => {
        const idle = Date.now() - lastProgress
        if (idle >= stallMs) step({kind: 'kill', cause: 'stalled'})
        else timers.stall = setTimeout(checkStall, Math.min(MAX_TIMER_MS, stallMs - idle))
      }
      timers.stall = setTimeout(checkStall, Math.min(MAX_TIMER_MS, stallMs))
    }

    if (inv.stdin !== 'ignore' && child.stdin) {
      child.stdin.on('error', () => {}) // an agent that never reads its stdin is fine
      child.stdin.end(inv.stdin.input)
    }

    const lines = createLineSplitter(record)
    const onData = (chunk: Buffer) => lines.push(chunk)
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
    const onExit = async (code: number | null, signal: NodeJS.Signals | null): Promise<void> => {
      step({kind: 'exit'})
      // The agent is gone. Anything left of its dispatch (the watchdog, a forked
      // helper, a grandchild holding the pipe, a setsid escapee) is ended:
      // SIGTERM now, SIGKILL at the kill's deadline or after a short grace.
      // one /proc scan serves both the escapee walk and the first look for what is left
      const table = processTable()
      collectEscapees(table)
      const until = state.kind === 'exited' ? state.deadline : Date.now()
      await endProcesses(target!, Math.max(0, until - Date.now()), undefined, table)
      // bounded drain: whatever is still in the pipe, then stop listening
      if (!streamClosed) {
        let drainTimer: NodeJS.Timeout | undefined
        await Promise.race([streamDone, new Promise<void>((r) => (drainTimer = setTimeout(r, DRAIN_MS)))])
        clearTimeout(drainTimer) // never keep the process alive for the drain window
      }
      out.off('data', onData)
      out.destroy()
      lines.end()
      forgetGroup(pgid)
      step({kind: 'settled', rc: spawnError ? 127 : code !== null ? code : signalExitCode(signal)})
    }
    child.once('exit', (code, signal) => {
      // a failure while cleaning up must still end the dispatch, never leave it pending
      onExit(code, signal).catch((error: unknown) => {
        req.log.event('agent cleanup failed', {error: errorMessage(error)}, 'error')
        step({kind: 'settled', rc: code ?? signalExitCode(signal)})
      })
    })
  })
}

/** the decoder's verdict, every field present */
function verdictOf(decoder: OutputDecoder): AgentVerdict {
  const v = decoder.verdict?.()
  return v ? {...PLAIN_VERDICT, ...v, lastLine: v.lastLine ?? null} : PLAIN_VERDICT
}

/**
 * Start the agent: AGENT_WRAPPER starts the watchdog in the agent's group, then
 * execs the agent with stderr on the stdout pipe (one pipe: order kept). The
 * argv travels as positional parameters, never as shell text.
 */
function spawnAgent(req: DispatchRequest, inv: Invocation, dispatchId: string, logPath: string): ChildProcess {
  const cwd = req.cwd ?? req.root
  const env = agentEnv(req, dispatchId, logPath)
  // SPEC 21: the watchdog runs outside the sandbox (it must see helix's pid); it execs bwrap
  const run = req.confine ? req.confine([inv.file, ...inv.args], env, cwd) : {argv: [inv.file, ...inv.args], env}
  return spawn('/bin/sh', ['-c', AGENT_WRAPPER, ...run.argv], {
    cwd,
    env: run.env,
    detached: true,
    stdio: [inv.stdin === 'ignore' ? 'ignore' : 'pipe', 'pipe', 'ignore'],
  })
}

/** helix's environment, the request's extras, and the HELIX_* variables of SPEC 3 / 14.5 */
function agentEnv(req: DispatchRequest, dispatchId: string, logPath: string): NodeJS.ProcessEnv {
  // an agent in a worker's worktree never reaches the operator's checkout through git discovery
  const env: NodeJS.ProcessEnv = fencedEnv(req.cwd ?? req.root, {...process.env, ...(req.env ?? {})})
  for (const k of ['HELIX_BEAD_ID', 'HELIX_CLAIM_TOKEN'] as const) delete env[k]
  if (req.beadId) env.HELIX_BEAD_ID = req.beadId
  if (req.claimToken) env.HELIX_CLAIM_TOKEN = req.claimToken
  env.HELIX_ACTION = req.action
  env.HELIX_RUN_LOG = logPath
  env.HELIX_DISPATCH_ID = dispatchId
  env.HELIX_RUN_PID = String(process.pid)
  // SPEC 18.3a: dead-run cleanup signals only processes of its own project
  env.HELIX_PROJECT = projectTag(req.root)
  const startToken = currentStartToken()
  if (startToken) env.HELIX_RUN_START = startToken
  else delete env.HELIX_RUN_START
  const shim = helixShimDir(req.root)
  if (shim) env.PATH = env.PATH ? `${shim}${path.delimiter}${env.PATH}` : shim
  return env
}

function assertNever(x: never): never {
  throw new Error(`unexpected dispatch state ${JSON.stringify(x)}`)
}
