/**
 * Running one agent (SPEC 3): exact argv per agent kind, project root as cwd,
 * helix's environment plus HELIX_* variables, its own process group, stdout and
 * stderr through ONE pipe (so their order is kept), output line-buffered into
 * the session log, a timeout that kills the whole group, and a registry of live
 * groups so no agent process outlives helix.
 */
import {spawn} from 'node:child_process'
import {createHash} from 'node:crypto'
import {chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync} from 'node:fs'
import os, {constants as osConstants} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {StringDecoder} from 'node:string_decoder'
import {claudeDecoder, codexDecoder, commandDecoder, type OutputDecoder} from './output.js'
import {defaultEffort} from './resolve.js'
import type {AgentRunner, DispatchRequest, DispatchResult, SessionLogLike} from './types.js'
import {pidAlive} from '../state/pidfile.js'
import {hhmmss} from '../util/time.js'

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
      args.push('--ephemeral', '--json', req.prompt)
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

/** SPEC 3: `helix: [t] <agent> timeout after Ns — killed`. */
export function timeoutMessage(agentName: string, seconds: number, now: Date = new Date()): string {
  return `helix: [${hhmmss(now)}] ${agentName} timeout after ${seconds}s — killed`
}

// ------------------------------------------------------------ process groups

/** live agent process groups → pids of their descendants that escaped the group (known once a kill began) */
const liveGroups = new Map<number, Set<number>>()
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

interface ProcEntry {
  pid: number
  ppid: number
  pgrp: number
  state: string
}

/** Every process in /proc (Linux); null where there is no /proc. */
function processTable(): ProcEntry[] | null {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return null
  }
  const out: ProcEntry[] = []
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8')
    } catch {
      continue
    }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    out.push({pid: Number(e), state: rest[0], ppid: Number(rest[1]), pgrp: Number(rest[2])})
  }
  return out
}

const dead = (state: string) => state === 'Z' || state === 'X'

/**
 * Live descendants of `root` that left its process group (setsid / setpgid), so
 * a group kill would miss them. Linux only (empty elsewhere).
 */
export function escapedDescendants(root: number, pgid: number): number[] {
  const table = processTable()
  if (!table) return []
  const children = new Map<number, ProcEntry[]>()
  for (const p of table) {
    const list = children.get(p.ppid)
    if (list) list.push(p)
    else children.set(p.ppid, [p])
  }
  const seeds = new Set<number>([root, ...table.filter((p) => p.pgrp === pgid).map((p) => p.pid)])
  const out: number[] = []
  const seen = new Set<number>()
  const queue = [...seeds]
  while (queue.length > 0) {
    const pid = queue.pop()!
    for (const c of children.get(pid) ?? []) {
      if (seen.has(c.pid)) continue
      seen.add(c.pid)
      queue.push(c.pid)
      if (c.pgrp !== pgid && !dead(c.state)) out.push(c.pid)
    }
  }
  return out
}


/** Process ids in group `pgid` that are alive (not zombies). Linux reads /proc; elsewhere kill(-pgid, 0). */
export function liveGroupMembers(pgid: number): number[] {
  // fast path: an empty group answers ESRCH without scanning /proc
  try {
    process.kill(-pgid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return []
  }
  const table = processTable()
  if (!table) return [pgid] // no /proc (not Linux): the group answered kill(0), so something is in it
  return table.filter((p) => p.pgrp === pgid && !dead(p.state)).map((p) => p.pid)
}

/** Process-group ids of the agents running now. */
export function liveAgentGroups(): number[] {
  return [...liveGroups.keys()]
}

/**
 * Send `signal` to every live agent process group (helix's own SIGINT/SIGTERM
 * handler calls this; the pending dispatches then resolve). Returns how many
 * groups were signalled.
 */
export function killAllAgentGroups(signal: NodeJS.Signals = 'SIGTERM'): number {
  let n = 0
  for (const [pgid, escapees] of liveGroups) for (const pid of escapedDescendants(pgid, pgid)) escapees.add(pid)
  for (const [pgid, escapees] of liveGroups) {
    if (signalGroup(pgid, signal)) n++
    for (const pid of escapees) {
      try {
        process.kill(pid, signal)
      } catch {
        /* gone */
      }
    }
  }
  return n
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

// ------------------------------------------------------------- helix on PATH

/** This package's CLI entry (`<package>/bin/run.js`), resolved from this module (src/ or dist/). */
export function helixCliPath(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'run.js')
}

let shimDirCache: string | null | undefined

/**
 * A directory holding a `helix` wrapper that runs THIS helix (same node, same
 * package), so the prompts' `helix tracker …` commands work for the agent even
 * when helix was started as `node bin/run.js` or via npx, and always talk to the
 * same version that holds the claim. Created once per package path under the
 * temp dir; null when it cannot be created (the agent then gets PATH unchanged).
 */
export function helixShimDir(): string | null {
  if (shimDirCache !== undefined) return shimDirCache
  try {
    const cli = helixCliPath()
    if (!existsSync(cli)) return (shimDirCache = null)
    const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`
    const body = `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(cli)} "$@"\n`
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0
    const dir = path.join(os.tmpdir(), `helix-shim-${uid}-${createHash('sha256').update(body).digest('hex').slice(0, 12)}`)
    const file = path.join(dir, 'helix')
    let current = ''
    try {
      current = readFileSync(file, 'utf8')
    } catch {
      /* not there yet */
    }
    mkdirSync(dir, {recursive: true, mode: 0o755})
    // shared temp dir: use it only if it is ours and nobody else can write into it
    const st = lstatSync(dir)
    if (!st.isDirectory() || (typeof process.getuid === 'function' && st.uid !== uid) || (st.mode & 0o022) !== 0) return (shimDirCache = null)
    if (current !== body) {
      const tmp = `${file}.${process.pid}.tmp`
      writeFileSync(tmp, body, {mode: 0o755})
      chmodSync(tmp, 0o755)
      renameSync(tmp, file)
    }
    return (shimDirCache = dir)
  } catch {
    return (shimDirCache = null)
  }
}

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
  const shim = helixShimDir()
  if (shim) env.PATH = env.PATH ? `${shim}${path.delimiter}${env.PATH}` : shim

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
    let onAbort: () => void = () => {}

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
      const verdict = decoder.verdict?.()
      log.event('dispatch end', {dispatch: n, rc, tokens, duration_ms: durationMs, timed_out: timedOut, ...(verdict && verdict.health.kind !== 'ok' ? {health: verdict.health} : {})})
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
        // SPEC 14.1: what the output said about the agent and the attempt
        ...(verdict
          ? {health: verdict.health, failed: verdict.failed, failureLine: verdict.failureLine, costUsd: verdict.costUsd, tokensReported: verdict.tokensReported, lastLine: verdict.lastLine ?? null}
          : {}),
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
    // spawn can fail synchronously (E2BIG: one argv string is limited to 128 KiB on
    // Linux, which a huge codex prompt can exceed) or asynchronously (bad cwd)
    const spawnFailed = (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'E2BIG'
          ? `the prompt (${Buffer.byteLength(req.prompt)} bytes) is too long for the command line`
          : err.code === 'ENOENT'
            ? `cwd ${req.root} or /bin/sh does not exist`
            : err.message
      record(`helix: cannot start ${req.agent.name}: ${why}`)
      finish(127)
    }
    let child: ReturnType<typeof spawn>
    try {
      child = spawn('/bin/sh', ['-c', 'exec "$0" "$@" 2>&1', inv.file, ...inv.args], {
        cwd: req.root,
        env,
        detached: true,
        stdio: [inv.stdin === 'ignore' ? 'ignore' : 'pipe', 'pipe', 'ignore'],
      })
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
    // moment of the kill, while the process tree still links them to the agent
    const escapees = new Set<number>()
    liveGroups.set(pgid, escapees)
    installExitHook()

    const collectEscapees = () => {
      for (const pid of escapedDescendants(pgid, pgid)) escapees.add(pid)
    }
    const signalAll = (sig: NodeJS.Signals) => {
      signalGroup(pgid, sig)
      for (const pid of escapees) {
        try {
          process.kill(pid, sig)
        } catch {
          escapees.delete(pid)
        }
      }
    }
    const stragglers = () => [...liveGroupMembers(pgid), ...[...escapees].filter(pidAlive)]
    const killGroup = (why: 'timeout' | 'abort') => {
      if (why === 'timeout') timedOut = true
      else aborted = true
      if (killDeadline) return
      killDeadline = Date.now() + graceMs
      collectEscapees()
      signalAll('SIGTERM')
      killTimer = setTimeout(() => {
        collectEscapees()
        signalAll('SIGKILL')
      }, graceMs)
    }
    onAbort = () => killGroup('abort')
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
      let members = stragglers()
      if (members.length > 0) {
        signalAll('SIGTERM')
        const until = killDeadline || Date.now() + Math.min(graceMs, STRAGGLER_GRACE_MS)
        while (members.length > 0 && Date.now() < until) {
          await sleep(50)
          members = stragglers()
        }
        if (members.length > 0) {
          signalAll('SIGKILL')
          // SIGKILL is delivered asynchronously: wait (bounded) until they are really gone
          const hardUntil = Date.now() + 1000
          while (stragglers().length > 0 && Date.now() < hardUntil) await sleep(20)
        }
      }
      // bounded drain: whatever is still in the pipe, then stop listening
      if (!streamClosed) {
        let drainTimer: NodeJS.Timeout | undefined
        await Promise.race([streamDone, new Promise<void>((r) => (drainTimer = setTimeout(r, DRAIN_MS)))])
        clearTimeout(drainTimer) // never keep the process alive for the drain window
      }
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
