/**
 * Running one agent (SPEC 3): exact argv per agent kind, project root as cwd,
 * helix's environment plus HELIX_* variables, its own process group, stdout and
 * stderr through ONE pipe (so their order is kept), output line-buffered into
 * the session log, a timeout that kills the whole group, and a registry of live
 * groups so no agent process outlives helix.
 */
import {spawn} from 'node:child_process'
import {createHash, randomBytes} from 'node:crypto'
import {chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {claudeDecoder, codexDecoder, commandDecoder, type OutputDecoder} from './output.js'
import {defaultEffort} from './resolve.js'
import type {DispatchRequest, DispatchResult, SessionLogLike} from './types.js'
import {currentStartToken} from '../recovery/probe.js'
import {endProcesses, escapedDescendants, killGraceMs, signalExitCode, signalGroup, signalTarget} from '../util/process.js'
import {AGENT_WRAPPER} from './watchdog.js'
import {hhmmss} from '../util/time.js'
import {errorMessage} from '../util/errors.js'
import {projectTag} from '../util/tagged.js'

export interface Invocation {
  file: string
  args: string[]
  stdin: 'ignore' | {input: string}
}

/** The exact command of SPEC 3 for `req` (effort defaults per action). */
export function buildInvocation(req: Pick<DispatchRequest, 'agent' | 'action' | 'prompt' | 'root' | 'cwd' | 'model' | 'effort'>): Invocation {
  const effort = req.effort ?? defaultEffort(req.action)
  switch (req.agent.kind) {
    case 'codex': {
      // a worker's attempt runs in its worktree (SPEC 15.1): codex's -C must name it too
      const args = ['--dangerously-bypass-approvals-and-sandbox', 'exec', '-C', req.cwd ?? req.root]
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

interface LiveDispatch {
  /** descendants that escaped the group (setsid / setpgid), known once a kill began */
  escapees: Set<number>
  /** the HELIX_DISPATCH_ID every process of the dispatch carries (SPEC 14.5) */
  dispatchId: string
}

/** live agent process groups → what else belongs to their dispatch */
const liveGroups = new Map<number, LiveDispatch>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // Last line of defence: whatever way helix exits, its agents go with it.
  process.on('exit', () => killAllAgentGroups('SIGKILL'))
}

export {escapedDescendants, liveGroupMembers} from '../util/process.js'

/** Process-group ids of the agents running now. */
export function liveAgentGroups(): number[] {
  return [...liveGroups.keys()]
}

/** HELIX_DISPATCH_IDs of the dispatches running now. */
export function liveDispatchIds(): string[] {
  return [...liveGroups.values()].map((d) => d.dispatchId)
}

/**
 * Send `signal` to every live agent process group, to every descendant that
 * escaped it, and to every process carrying the dispatch id of an in-flight
 * dispatch (helix's own SIGINT/SIGTERM handler calls this; the pending
 * dispatches then resolve). Returns how many groups were signalled.
 */
export function killAllAgentGroups(signal: NodeJS.Signals = 'SIGTERM'): number {
  let n = 0
  for (const [pgid, d] of liveGroups) for (const pid of escapedDescendants(pgid, pgid)) d.escapees.add(pid)
  for (const [pgid, d] of liveGroups) {
    if (signalGroup(pgid, signal)) n++
    signalTarget({dispatchId: d.dispatchId, pids: d.escapees}, signal)
  }
  return n
}

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
    // no usable shim dir (tmp unwritable, not ours): the agent gets PATH unchanged, as documented above
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

/** A line longer than this is cut in the session log and for the decoder (SPEC 14.5). */
export const MAX_LINE_BYTES = 1024 * 1024

export interface LineSplitter {
  push(chunk: Buffer): void
  /** the unterminated rest, if any */
  end(): void
}

/**
 * Split a byte stream into lines in linear time with bounded memory: at most
 * `maxBytes` of one line are kept, the rest is counted and the line is handed
 * on as `<kept>…[cut N bytes]` (never cutting a UTF-8 sequence in half). A
 * trailing CR is dropped. '\n' never occurs inside a UTF-8 sequence, so each
 * line decodes on its own.
 */
export function createLineSplitter(onLine: (line: string) => void, maxBytes = MAX_LINE_BYTES): LineSplitter {
  let parts: Buffer[] = []
  let kept = 0
  let cut = 0
  let pending = false
  const append = (b: Buffer) => {
    if (b.length === 0) return
    pending = true
    const room = maxBytes - kept
    if (room <= 0) {
      cut += b.length
      return
    }
    const take = b.length <= room ? b : b.subarray(0, room)
    // copy small slices so a kept byte never pins a whole 64 KiB chunk
    parts.push(take.length * 2 < take.buffer.byteLength ? Buffer.from(take) : take)
    kept += take.length
    cut += b.length - take.length
  }
  const emit = () => {
    let buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, kept)
    let extra = 0
    if (cut > 0) {
      // back off to a character boundary: drop a trailing partial UTF-8 sequence
      let i = buf.length - 1
      let back = 0
      while (i >= 0 && back < 3 && (buf[i] & 0xc0) === 0x80) {
        i--
        back++
      }
      if (i >= 0 && buf[i] >= 0xc0) {
        const need = buf[i] >= 0xf0 ? 4 : buf[i] >= 0xe0 ? 3 : 2
        if (back + 1 < need) extra = back + 1
      }
      if (extra) buf = buf.subarray(0, buf.length - extra)
    } else if (buf.length > 0 && buf[buf.length - 1] === 13) buf = buf.subarray(0, buf.length - 1)
    const text = buf.toString('utf8')
    const line = cut > 0 ? `${text}…[cut ${cut + extra} bytes]` : text
    parts = []
    kept = 0
    cut = 0
    pending = false
    onLine(line)
  }
  return {
    push(chunk) {
      let start = 0
      for (;;) {
        const nl = chunk.indexOf(10, start)
        if (nl < 0) {
          append(chunk.subarray(start))
          return
        }
        append(chunk.subarray(start, nl))
        pending = true
        emit()
        start = nl + 1
      }
    },
    end() {
      if (pending) emit()
    },
  }
}

const DRAIN_MS = 1000
const STRAGGLER_GRACE_MS = 1000

function decoderFor(kind: DispatchRequest['agent']['kind']): OutputDecoder {
  return kind === 'codex' ? codexDecoder() : kind === 'claude' ? claudeDecoder() : commandDecoder()
}

/** SPEC 14.4: the failure text of an attempt the stall guard killed. */
export function stallMessage(seconds: number): string {
  return `stalled: no output for ${seconds}s`
}

/**
 * Run one agent to completion. Never rejects for agent failures: a spawn
 * error is rc 127, a signal death is 128+signal, a timeout sets `timedOut`,
 * the stall guard sets `stalled`. When the dispatch ends, for any reason, its
 * process group and every process carrying its HELIX_DISPATCH_ID are ended
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

  const env: NodeJS.ProcessEnv = {...process.env, ...(req.env ?? {})}
  for (const k of ['HELIX_BEAD_ID', 'HELIX_CLAIM_TOKEN'] as const) delete env[k]
  if (req.beadId) env.HELIX_BEAD_ID = req.beadId
  if (req.claimToken) env.HELIX_CLAIM_TOKEN = req.claimToken
  env.HELIX_ACTION = req.action
  env.HELIX_RUN_LOG = log.path
  env.HELIX_DISPATCH_ID = dispatchId
  env.HELIX_RUN_PID = String(process.pid)
  // SPEC 18.3a: dead-run cleanup signals only processes of its own project
  env.HELIX_PROJECT = projectTag(req.root)
  const startToken = currentStartToken()
  if (startToken) env.HELIX_RUN_START = startToken
  else delete env.HELIX_RUN_START
  const shim = helixShimDir()
  if (shim) env.PATH = env.PATH ? `${shim}${path.delimiter}${env.PATH}` : shim

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
    let timedOut = false
    let aborted = false
    let stalled = false
    let killDeadline = 0
    let timeoutTimer: NodeJS.Timeout | undefined
    let stallTimer: NodeJS.Timeout | undefined
    let killTimer: NodeJS.Timeout | undefined
    let finished = false
    let onAbort: () => void = () => {}

    const finish = (rc: number) => {
      if (finished) return
      finished = true
      if (timeoutTimer) clearTimeout(timeoutTimer)
      if (stallTimer) clearTimeout(stallTimer)
      if (killTimer) clearTimeout(killTimer)
      req.signal?.removeEventListener('abort', onAbort)
      const durationMs = Date.now() - started
      if (timedOut) log.event(timeoutMessage(req.agent.name, req.timeoutSec), tag, 'warn')
      if (stalled) log.event(`helix: [${hhmmss(new Date())}] ${req.agent.name} ${stallMessage(req.stallTimeoutSec ?? 0)} — killed`, tag, 'warn')
      if (aborted) log.event(`helix: ${req.agent.name} interrupted — killed`, tag, 'warn')
      const tokens = decoder.tokens()
      const verdict = decoder.verdict?.()
      log.event('dispatch end', {...tag, rc, tokens, duration_ms: durationMs, timed_out: timedOut, ...(verdict && verdict.health.kind !== 'ok' ? {health: verdict.health} : {})})
      resolve({
        dispatchId,
        stalled,
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
      finish(signalExitCode('SIGINT'))
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
      finish(127)
    }
    let child: ReturnType<typeof spawn>
    try {
      // AGENT_WRAPPER starts the watchdog in the agent's group, then execs the
      // agent with stderr on the stdout pipe (one pipe: order kept). The argv
      // travels as positional parameters, never as shell text.
      child = spawn('/bin/sh', ['-c', AGENT_WRAPPER, inv.file, ...inv.args], {
        cwd: req.cwd ?? req.root,
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
    // moment of the kill, while the process tree still links them to the agent;
    // the ones whose parent is already gone are found by their dispatch id
    const escapees = new Set<number>()
    liveGroups.set(pgid, {escapees, dispatchId})
    installExitHook()
    if (req.onSpawn) {
      // the wrapper execs the agent, so the group leader's pid is the agent's pid
      try {
        req.onSpawn(pgid)
      } catch (error) {
        log.event('onSpawn failed', {...tag, error: errorMessage(error)}, 'warn')
      }
    }
    const target = {pgid, dispatchId, pids: escapees}

    const collectEscapees = () => {
      for (const pid of escapedDescendants(pgid, pgid)) escapees.add(pid)
    }
    const killGroup = (why: 'timeout' | 'abort' | 'stall') => {
      if (why === 'timeout') timedOut = true
      else if (why === 'stall') stalled = true
      else aborted = true
      if (killDeadline) return
      killDeadline = Date.now() + graceMs
      collectEscapees()
      signalTarget(target, 'SIGTERM')
      killTimer = setTimeout(() => {
        collectEscapees()
        signalTarget(target, 'SIGKILL')
      }, graceMs)
    }
    onAbort = () => killGroup('abort')
    req.signal?.addEventListener('abort', onAbort, {once: true})
    // setTimeout overflows past 2^31-1 ms (≈ 24.8 days) and would fire at once: clamp
    timeoutTimer = setTimeout(() => killGroup('timeout'), Math.min(2 ** 31 - 1, Math.max(1, req.timeoutSec * 1000)))
    if (stallMs > 0) {
      // re-armed lazily: one timer per stall window, not one per output line
      const checkStall = () => {
        const idle = Date.now() - lastProgress
        if (idle >= stallMs) killGroup('stall')
        else stallTimer = setTimeout(checkStall, Math.min(2 ** 31 - 1, stallMs - idle))
      }
      stallTimer = setTimeout(checkStall, Math.min(2 ** 31 - 1, stallMs))
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
      // The agent is gone. Anything left of its dispatch (the watchdog, a forked
      // helper, a grandchild holding the pipe, a setsid escapee) is ended:
      // SIGTERM now, SIGKILL at the kill's deadline or after a short grace.
      if (stallTimer) clearTimeout(stallTimer)
      collectEscapees()
      const until = killDeadline || Date.now() + Math.min(graceMs, STRAGGLER_GRACE_MS)
      await endProcesses(target, Math.max(0, until - Date.now()))
      // bounded drain: whatever is still in the pipe, then stop listening
      if (!streamClosed) {
        let drainTimer: NodeJS.Timeout | undefined
        await Promise.race([streamDone, new Promise<void>((r) => (drainTimer = setTimeout(r, DRAIN_MS)))])
        clearTimeout(drainTimer) // never keep the process alive for the drain window
      }
      out.off('data', onData)
      out.destroy()
      lines.end()
      liveGroups.delete(pgid)
      let rc: number
      if (spawnError) rc = 127
      else if (code !== null) rc = code
      else rc = signalExitCode(signal)
      finish(rc)
    }
    child.once('exit', (code, signal) => {
      // a failure while cleaning up must still end the dispatch, never leave it pending
      onExit(code, signal).catch((error: unknown) => {
        req.log.event('agent cleanup failed', {error: errorMessage(error)}, 'error')
        finish(code ?? signalExitCode(signal))
      })
    })
  })
}
