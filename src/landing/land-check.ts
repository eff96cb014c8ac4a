/**
 * SPEC 20.3: the team's own land check, run by `sh -c` in an attempt's worktree on
 * the candidate as it would land. Its processes live in a group of their own and end
 * with it (14.5): on exit, timeout, stall (no output for the stall window, 14.4) or
 * helix's own stop. Its output is kept as a bounded tail; the last 40 lines are what
 * the session log, the next prompt and the resolve action see.
 */
import {randomUUID} from 'node:crypto'
import {constants as fsc} from 'node:fs'
import {lstat, mkdir, open} from 'node:fs/promises'
import path from 'node:path'
import {forgetGroup, registerGroup} from '../proc/groups.js'
import {endProcesses, killGraceMs, signalExitCode} from '../proc/process.js'

export const LAND_CHECK_TAIL = 40
export const DEFAULT_LAND_CHECK_TIMEOUT_SEC = 1800

export interface LandCheckRun {
  rc: number
  ms: number
  /** the last 40 lines of its merged output */
  tail: string[]
  /** the whole (bounded) output, for `.helix/land-check.log` */
  output: string
  ended?: 'timeout' | 'stall'
}

export interface LandCheckSpec {
  command: string
  timeoutSec: number
  /** no output for this long ends it (0: no stall guard) */
  stallSec: number
  env: NodeJS.ProcessEnv
  signal?: AbortSignal
  graceMs?: number
  /** SPEC 20.3/21: `--sandbox` runs the check confined (set by the sandbox wiring); cwd is its writable place */
  confine?: (argv: string[], env: NodeJS.ProcessEnv, cwd: string) => {argv: string[]; env: NodeJS.ProcessEnv}
}

const KEEP = 256 * 1024
/** the longest line of the tail the session log and the next prompt see (the whole output goes to .helix/land-check.log) */
export const TAIL_LINE = 400

export async function runLandCheck(spec: LandCheckSpec, cwd: string, extraEnv: Record<string, string>): Promise<LandCheckRun> {
  const {execa} = await import('execa')
  const t0 = performance.now()
  const graceMs = spec.graceMs ?? killGraceMs(spec.env)
  let output = ''
  let ended: LandCheckRun['ended']
  // a tag in its environment finds the processes that leave its group (14.5)
  const dispatchId = `land-check-${randomUUID()}`
  const env0: NodeJS.ProcessEnv = {...spec.env, ...extraEnv, HELIX_DISPATCH_ID: dispatchId}
  const run = spec.confine ? spec.confine(['sh', '-c', spec.command], env0, cwd) : {argv: ['sh', '-c', spec.command], env: env0}
  const sub = execa(run.argv[0] as string, run.argv.slice(1), {
    cwd,
    env: {...run.env, HELIX_DISPATCH_ID: dispatchId},
    extendEnv: false,
    stdin: 'ignore',
    all: true,
    buffer: false,
    detached: true,
    reject: false,
  })
  const pgid = sub.pid
  if (pgid) registerGroup(pgid, {escapees: new Set(), dispatchId})
  let ending: Promise<unknown> | null = null
  const end = (why?: 'timeout' | 'stall') => {
    if (why && !ended) ended = why
    if (pgid && !ending) ending = endProcesses({pgid, dispatchId}, graceMs)
  }
  let stall: NodeJS.Timeout | null = null
  const arm = () => {
    if (spec.stallSec <= 0) return
    if (stall) clearTimeout(stall)
    stall = setTimeout(() => end('stall'), Math.min(spec.stallSec * 1000, 2 ** 31 - 1))
  }
  arm()
  sub.all?.on('data', (d: Buffer) => {
    output += d.toString('utf8')
    if (output.length > KEEP * 2) output = output.slice(-KEEP)
    arm()
  })
  const timer = setTimeout(() => end('timeout'), Math.min(Math.max(1, spec.timeoutSec * 1000), 2 ** 31 - 1))
  const onAbort = () => end()
  spec.signal?.addEventListener('abort', onAbort, {once: true})
  if (spec.signal?.aborted) end()
  // the check is done: whatever it left in its group ends too, so nothing outlives it
  sub.once('exit', () => {
    if (pgid && !ending) ending = endProcesses({pgid, dispatchId}, Math.min(graceMs, 1000))
  })
  try {
    const r = await sub
    await ending
    const rc = typeof r.exitCode === 'number' ? r.exitCode : r.signal ? signalExitCode(r.signal) : 127
    const lines = output.split('\n')
    if (lines.at(-1) === '') lines.pop()
    // a line of megabytes (a minified bundle, a progress bar without newlines) must not fill the next prompt
    const tail = lines.slice(-LAND_CHECK_TAIL).map((l) => (l.length > TAIL_LINE ? `${l.slice(0, TAIL_LINE)}… (${l.length - TAIL_LINE} more characters in the log)` : l))
    return {rc: ended && rc === 0 ? 1 : rc, ms: Math.round(performance.now() - t0), tail, output, ...(ended ? {ended} : {})}
  } finally {
    clearTimeout(timer)
    if (stall) clearTimeout(stall)
    spec.signal?.removeEventListener('abort', onAbort)
    if (pgid) forgetGroup(pgid)
  }
}

/** SPEC 20.3: the one reason line of a failed check (exit, timeout or stall) */
export function checkFailReason(c: LandCheckRun, spec: Pick<LandCheckSpec, 'timeoutSec' | 'stallSec'>): string {
  return c.ended === 'timeout' ? `land check timed out after ${spec.timeoutSec}s` : c.ended === 'stall' ? `land check stalled: no output for ${spec.stallSec}s` : `land check failed (rc=${c.rc})`
}

/** What a landing needs to know of one check of a candidate: passed, or why not. */
export interface CandidateCheck {
  passed: boolean
  /** the reason line when it did not pass */
  reason: string
  run: LandCheckRun
}

/**
 * SPEC 20.3: the land check of one candidate (the attempt rebased onto `onto`) in
 * `dir`, with the check's own environment; `onCheck` is told of it for the loop's
 * lines. Used by the remote and pull-request landings (the local landing has its own
 * rounds around the land lock).
 */
export async function checkCandidate(
  spec: LandCheckSpec,
  dir: string,
  a: {bead: string; attempt: number; onto: string; project: string},
  onCheck?: (ev: {passed: boolean; rc: number; ms: number; tail: string[]; onto: string; ended?: 'timeout' | 'stall'}) => void,
): Promise<CandidateCheck> {
  const c = await runLandCheck(spec, dir, {HELIX_BEAD_ID: a.bead, HELIX_ATTEMPT: String(a.attempt), HELIX_LAND_BASE: a.onto, HELIX_PROJECT: a.project})
  const passed = c.rc === 0 && !c.ended
  onCheck?.({passed, rc: c.rc, ms: c.ms, tail: c.tail, onto: a.onto, ...(c.ended ? {ended: c.ended} : {})})
  return {passed, reason: passed ? '' : checkFailReason(c, spec), run: c}
}

/**
 * Writes `<dir>/.helix/land-check.log` for the resolve action without following a
 * symlink the agent may have put there (SPEC 20.4): `.helix` must be a real
 * directory, and the file is opened with O_NOFOLLOW. Returns the path, or null when
 * it could not be written safely (the prompt carries the last lines anyway).
 */
export async function writeCheckLog(dir: string, text: string): Promise<string | null> {
  const helixDir = path.join(dir, '.helix')
  try {
    const st = await lstat(helixDir).catch(() => null)
    if (st && !st.isDirectory()) return null
    if (!st) await mkdir(helixDir)
    const file = path.join(helixDir, 'land-check.log')
    const fh = await open(file, fsc.O_WRONLY | fsc.O_CREAT | fsc.O_TRUNC | fsc.O_NOFOLLOW, 0o644)
    try {
      if (!(await fh.stat()).isFile()) return null
      await fh.writeFile(text)
    } finally {
      await fh.close()
    }
    return file
  } catch {
    return null
  }
}
