/**
 * One home for process helpers: is a pid alive, signal → exit
 * code, the SIGTERM → SIGKILL grace, and killing a process group together with
 * the processes that carry a dispatch id (SPEC 14.5). Node built-ins only: this
 * module is on the path of light commands.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {constants as osConstants} from 'node:os'
import {abortableSleep as pause} from '../util/abort.js'
import {EXIT} from '../util/errors.js'
import {processesOfDispatch} from './tagged.js'

/** true when `pid` exists and is not a zombie. */
export function pidAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state !== 'Z' && state !== 'X'
  } catch {
    // no /proc (not Linux): trust kill(0)
    return true
  }
}

/** The shell convention: 128 + signal number (SIGHUP 129, SIGINT 130, SIGKILL 137, SIGTERM 143). */
export function signalExitCode(signal: NodeJS.Signals | string | null | undefined): number {
  switch (signal) {
    case 'SIGHUP':
      return EXIT.SIGHUP
    case 'SIGINT':
      return EXIT.SIGINT
    case 'SIGTERM':
      return EXIT.SIGTERM
    default: {
      const n = signal ? (osConstants.signals as Record<string, number>)[signal] : undefined
      return 128 + (n ?? 9)
    }
  }
}

export const DEFAULT_KILL_GRACE_MS = 10_000

/** SIGTERM → SIGKILL grace: `HELIX_KILL_GRACE_MS` (a whole number of ms) overrides the 10 s of SPEC 3. */
export function killGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.HELIX_KILL_GRACE_MS?.trim()
  if (raw && /^\d{1,9}$/.test(raw)) return Number(raw)
  return DEFAULT_KILL_GRACE_MS
}

export interface ProcEntry {
  pid: number
  ppid: number
  pgrp: number
  state: string
  /** start time in clock ticks since boot (/proc stat field 22) */
  start: number
}

/** Every process in /proc (Linux); null where there is no /proc. */
export function processTable(): ProcEntry[] | null {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    // no /proc (not Linux): callers fall back to kill(0)
    return null
  }
  const out: ProcEntry[] = []
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${e}/stat`, 'utf8')
    } catch {
      // the process exited between readdir and read: not in the table
      continue
    }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    out.push({pid: Number(e), state: rest[0], ppid: Number(rest[1]), pgrp: Number(rest[2]), start: Number(rest[19])})
  }
  return out
}

const dead = (state: string) => state === 'Z' || state === 'X'

/** Send `signal` to process group `pgid`; false when the group is gone. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    // ESRCH: the group is gone; EPERM: not ours. Either way nothing here to signal (callers re-check liveness)
    return false
  }
}

/** Send `signal` to each pid (never to pid ≤ 1 or to helix itself); returns the pids that were signalled. */
export function signalPids(pids: Iterable<number>, signal: NodeJS.Signals): number[] {
  const out: number[] = []
  for (const pid of pids) {
    if (!Number.isSafeInteger(pid) || pid <= 1 || pid === process.pid) continue
    try {
      process.kill(pid, signal)
      out.push(pid)
    } catch {
      /* gone */
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
  return groupIn(table, pgid)
}

/**
 * Live descendants of `root` (and of group `pgid`'s members) that left the
 * group (setsid / setpgid), so a group kill would miss them. Linux only.
 */
export function escapedDescendants(root: number, pgid: number, table: ProcEntry[] | null = processTable()): number[] {
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

/** What belongs to one dispatch: its process group, its dispatch id, and pids known to have escaped. */
export interface KillTarget {
  pgid?: number
  dispatchId?: string
  pids?: Iterable<number>
  /**
   * The start time (clock ticks, /proc stat field 22) of the dispatch's first process. The
   * dispatch id exists only in the environment helix gave that process, so every process
   * carrying it started no earlier: only those have their environment read (one
   * /proc/<pid>/stat scan instead of reading every process's environment on the host).
   */
  since?: number
}

/** The pids of group `pgid` in `table` that are alive. */
function groupIn(table: ProcEntry[], pgid: number): number[] {
  return table.filter((p) => p.pgrp === pgid && !dead(p.state)).map((p) => p.pid)
}

/**
 * The live processes of `t` (group members, tagged processes, listed pids), from one
 * scan of /proc (`table` when the caller has just made one).
 */
export function liveProcessesOf(t: KillTarget, table?: ProcEntry[] | null): number[] {
  const out = new Set<number>()
  const scan = (): ProcEntry[] | null => (table === undefined ? (table = processTable()) : table)
  if (t.pgid) {
    let empty = false
    try {
      process.kill(-t.pgid, 0)
    } catch (err) {
      // an empty group answers ESRCH: nothing to scan for
      empty = (err as NodeJS.ErrnoException).code === 'ESRCH'
    }
    if (!empty) {
      const tab = scan()
      // no /proc (not Linux): the group answered kill(0), so something is in it
      for (const pid of tab ? groupIn(tab, t.pgid) : [t.pgid]) out.add(pid)
    }
  }
  if (t.dispatchId) {
    const tab = t.since !== undefined && Number.isFinite(t.since) ? scan() : null
    const among = tab ? tab.filter((p) => p.start >= t.since!).map((p) => p.pid) : undefined
    for (const pid of processesOfDispatch(t.dispatchId, {among})) if (pidAlive(pid)) out.add(pid)
  }
  if (t.pids) for (const pid of t.pids) if (pidAlive(pid)) out.add(pid)
  out.delete(process.pid)
  return [...out]
}

/** Signal everything of `t` once: the group, every process carrying its dispatch id, the listed pids. */
export function signalTarget(t: KillTarget, signal: NodeJS.Signals): void {
  if (t.pgid) signalGroup(t.pgid, signal)
  const pids = new Set<number>(t.pids ?? [])
  if (t.dispatchId) for (const pid of processesOfDispatch(t.dispatchId)) pids.add(pid)
  signalPids(pids, signal)
}

/**
 * End every process of `t`: SIGTERM, wait until they are gone or `graceMs`
 * passed, then SIGKILL and wait (bounded) until the kernel has removed them.
 * Returns the pids still alive at the end (normally none).
 */
export async function endProcesses(t: KillTarget, graceMs: number, pollMs = 50, table?: ProcEntry[] | null): Promise<number[]> {
  let found = liveProcessesOf(t, table)
  if (found.length === 0) return []
  // one full scan found them; signal those (and the group) without scanning /proc again
  const term = (pids: number[]) => {
    if (t.pgid) signalGroup(t.pgid, 'SIGTERM')
    signalPids(pids, 'SIGTERM')
  }
  term(found)
  const until = Date.now() + graceMs
  // most processes die within milliseconds of SIGTERM: look again soon, then less often.
  // While waiting, only the pids already found are checked (kill 0, no /proc scan); once
  // they are gone one full scan makes sure nothing new appeared (a fork during the kill).
  let wait = 2
  for (;;) {
    let left = found.filter((pid) => pidAlive(pid))
    while (left.length > 0 && Date.now() < until) {
      await pause(Math.min(wait, Math.max(1, until - Date.now())))
      wait = Math.min(wait * 2, pollMs)
      left = left.filter((pid) => pidAlive(pid))
    }
    if (left.length > 0) break
    found = liveProcessesOf(t)
    if (found.length === 0) return []
    if (Date.now() >= until) break
    term(found)
  }
  let left = liveProcessesOf(t)
  if (left.length === 0) return []
  signalTarget(t, 'SIGKILL')
  signalPids(left, 'SIGKILL')
  const hardUntil = Date.now() + 2000
  while ((left = liveProcessesOf(t)).length > 0 && Date.now() < hardUntil) await pause(20)
  return left
}

export interface ScriptRun {
  /** exit code; 128+n for a signal death, 127 when it could not start */
  code: number
  /** the last 4 KiB of its merged output */
  output: string
  timedOut: boolean
}

/**
 * Run a hook/gate script (acceptance scripts, SPEC 5.8) through execa (imported
 * lazily): no stdin, argv only, in its own process group, bounded by
 * `timeoutSec` and killed on `signal` (helix's own SIGINT/SIGTERM). Its whole
 * group gets SIGTERM, then SIGKILL after the grace; when the script exits,
 * whatever it left behind in its group is ended too, so a background child
 * holding the pipe never wedges the run. Output memory is bounded (the tail).
 */
export async function runScript(
  file: string,
  opts: {cwd: string; timeoutSec: number; signal?: AbortSignal; graceMs?: number; env?: NodeJS.ProcessEnv; args?: string[]},
): Promise<ScriptRun> {
  const {execa} = await import('execa')
  const graceMs = opts.graceMs ?? killGraceMs()
  const TAIL = 64 * 1024
  let output = ''
  let timedOut = false
  const sub = execa(file, opts.args ?? [], {
    cwd: opts.cwd,
    ...(opts.env ? {env: opts.env, extendEnv: false} : {}),
    stdin: 'ignore',
    all: true,
    buffer: false,
    detached: true,
    reject: false,
    stripFinalNewline: false,
  })
  const pgid = sub.pid
  sub.all?.on('data', (d: Buffer) => {
    output += d.toString('utf8')
    if (output.length > TAIL * 2) output = output.slice(-TAIL)
  })
  let ending: Promise<unknown> | null = null
  const end = () => {
    if (pgid && !ending) ending = endProcesses({pgid}, graceMs)
  }
  const timer = setTimeout(() => {
    timedOut = true
    end()
  }, Math.min(Math.max(1, opts.timeoutSec * 1000), 2 ** 31 - 1))
  opts.signal?.addEventListener('abort', end, {once: true})
  if (opts.signal?.aborted) end()
  // the script is done: end what it left in its group (briefly), so its pipe closes
  sub.once('exit', () => {
    if (pgid && !ending) ending = endProcesses({pgid}, Math.min(graceMs, 1000))
  })
  try {
    const r = await sub
    await ending
    const code = typeof r.exitCode === 'number' ? r.exitCode : r.signal ? signalExitCode(r.signal) : 127
    return {code, output: output.slice(-4096), timedOut}
  } finally {
    clearTimeout(timer)
    opts.signal?.removeEventListener('abort', end)
  }
}
