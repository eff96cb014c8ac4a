/**
 * `helix start` and `helix stop` (SPEC 7.2): launch `helix run --summary` in its
 * own session, detached from the launching terminal; stop it with SIGTERM and,
 * after a grace period, SIGKILL.
 */
import {spawn} from 'node:child_process'
import {closeSync, existsSync, openSync, readFileSync, rmdirSync, statSync, unlinkSync} from 'node:fs'
import {makeDirSync} from '../util/files.js'
import path from 'node:path'
import {helixCliPath} from '../util/install.js'
import {HelixError, errorMessage, EXIT} from '../util/errors.js'
import {projectPaths, type ProjectPaths} from '../util/root.js'
import {readPidFile, removePidFileIf, runHolderAlive} from '../state/pidfile.js'
import {abortableSleep} from '../util/abort.js'
import {pidAlive} from '../proc/process.js'
import {pidMatchesRecord, validStartField} from '../proc/pid-identity.js'
import {checkPidFile, stalePidWords} from './report.js'
import {fileStamp} from '../util/time.js'




/** Create `.helix-logs/start-<stamp>.log` exclusively (next second's name when taken). */
export function openStartLog(logDir: string, now: Date): {fd: number; file: string} {
  makeDirSync(logDir)
  for (let i = 0; i < 3600; i++) {
    const file = path.join(logDir, `start-${fileStamp(new Date(now.getTime() + i * 1000))}.log`)
    try {
      return {fd: openSync(file, 'wx', 0o644), file}
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
  throw new HelixError(`cannot create a start log in ${logDir}`, EXIT.ERROR)
}

/** `run` flags to forward: everything the user gave, minus a repeated --summary/-s (start adds it). */
export function forwardedRunArgs(args: readonly string[]): string[] {
  return args.filter((a) => a !== '--summary' && a !== '-s')
}

export interface StartOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** run flags as the user typed them */
  args: readonly string[]
  now?: Date
  /** how long to wait for the run to write its pid file */
  waitMs?: number
  entry?: string
}

export interface StartResult {
  pid: number
  log: string
  /** the run already exited 0 before start saw its pid file (nothing to do) */
  finished?: boolean
}

function logLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean)
  } catch {
    // no start log (yet): nothing to quote in the message
    return []
  }
}

/**
 * A run refused at once (bad flags, no agent, not a project): its start log holds
 * only helix's one-line refusal, which start prints itself. Remove the log (and the
 * log directory start made for it), so bad input leaves nothing on disk.
 */
function dropRefusalLog(file: string, lines: readonly string[], madeDir: string | null): boolean {
  if (lines.length === 0 || lines.length > 3 || !lines.every((l) => l.startsWith('helix'))) return false
  try {
    unlinkSync(file)
  } catch {
    return false
  }
  try {
    if (madeDir) rmdirSync(madeDir)
  } catch {
    // not empty (another start or run wrote there meanwhile): it stays
  }
  return true
}

export async function startRun(opts: StartOptions): Promise<StartResult> {
  const cwd = opts.cwd ?? process.cwd()
  const env = opts.env ?? process.env
  const paths = projectPaths(cwd, env)
  const holder = readPidFile(paths.pidFile)
  if (holder && runHolderAlive(holder)) {
    throw new HelixError(`helix start: already running (pid=${holder.pid}, started=${holder.started})`, EXIT.BUSY)
  }
  // a dead run's file, or one whose pid now belongs to another process: the run's
  // own mutex only knows kill(0), so clear it here
  if (holder) checkPidFile(paths.pidFile)
  const madeDir = existsSync(paths.logDir) ? null : paths.logDir
  const {fd, file} = openStartLog(paths.logDir, opts.now ?? new Date())
  let child
  try {
    // Own session (detached → setsid): no controlling terminal, so closing the
    // launching shell sends it no SIGHUP; no inherited pipes, so no SIGPIPE.
    child = spawn(process.execPath, [opts.entry ?? helixCliPath(), 'run', '--summary', ...forwardedRunArgs(opts.args)], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', fd, fd],
    })
  } finally {
    closeSync(fd)
  }
  const pid = child.pid
  if (pid === undefined) throw new HelixError(`could not start helix run (see ${file})`, EXIT.ERROR)
  let exited: number | null = null
  child.once('exit', (code, signal) => {
    exited = code ?? (signal ? 128 : 1)
  })
  child.once('error', () => {
    exited = exited ?? 1
  })
  child.unref()

  const deadline = Date.now() + (opts.waitMs ?? 10_000)
  while (Date.now() < deadline) {
    const rec = readPidFile(paths.pidFile)
    if (rec && rec.pid === pid) return {pid, log: file}
    if (exited !== null) break
    await abortableSleep(25)
  }
  if (exited === 0) {
    // a run with nothing to do can start and finish between two polls
    return {pid, log: file, finished: true}
  }
  if (exited !== null) {
    const rc: number = exited
    const lines = logLines(file)
    const why = lines.length ? lines[lines.length - 1] : null
    const code = rc === EXIT.OK ? EXIT.ERROR : rc
    if (why && why.startsWith('helix') && dropRefusalLog(file, lines, madeDir)) throw new HelixError(why, code)
    throw new HelixError(why && why.startsWith('helix') ? `${why} (see ${file})` : `run exited at once (rc=${rc}); see ${file}`, code)
  }
  // still running but no pid file yet: report the child (it is the run process)
  return {pid, log: file}
}

export interface StopOptions {
  paths: Pick<ProjectPaths, 'pidFile'> & Partial<ProjectPaths>
  graceMs?: number
  pollMs?: number
  sleep?: (ms: number) => Promise<void>
  alive?: (pid: number) => boolean
  kill?: (pid: number, signal: NodeJS.Signals) => void
}

export interface StopResult {
  pid: number
  /** true when SIGKILL was needed */
  killed: boolean
  /** beads a SIGKILLed run still held that stop unclaimed */
  released?: string[]
}

/**
 * After SIGKILL the run could not unclaim its in-flight bead, and a fresh claim
 * of a dead pid stays "live" for HELIX_ORPHAN_THRESHOLD (SPEC 2.4), so release
 * it here: every in_progress bead whose claimed-pid is the killed pid (and whose
 * machine is this host), re-checked under the tracker lock.
 */
export async function releaseClaimsOf(paths: ProjectPaths, pid: number, now: Date = new Date()): Promise<string[]> {
  const [{mutateTracker}, {releaseClaim}, {hostname}] = await Promise.all([
    import('../tracker/store.js'),
    import('../tracker/ops.js'),
    import('node:os'),
  ])
  const host = hostname()
  return mutateTracker(paths, (snap) => {
    const released: string[] = []
    for (const b of snap.beads) {
      if (b.status !== 'in_progress' || String(b['claimed-pid'] ?? '') !== String(pid)) continue
      const machine = b['claimed-machine']
      if (typeof machine === 'string' && machine !== '' && machine !== host) continue
      releaseClaim(b, now)
      released.push(b.id)
    }
    return {beads: released.length ? snap.beads : null, result: released}
  })
}

export async function stopRun(opts: StopOptions): Promise<StopResult> {
  const alive = opts.alive ?? pidAlive
  const kill = opts.kill ?? ((pid: number, sig: NodeJS.Signals) => process.kill(pid, sig))
  const sleep = opts.sleep ?? ((ms: number) => abortableSleep(ms))
  const graceMs = opts.graceMs ?? 15_000
  const pollMs = opts.pollMs ?? 100
  const file = opts.paths.pidFile
  const rec = readPidFile(file)
  if (!rec) throw new HelixError('no active run (no PID file)', EXIT.ERROR)
  const removeIfSame = () => {
    removePidFileIf(file, rec)
  }
  if (!(rec.pid > 0) && Date.now() - statSync(file).mtimeMs < 5_000) {
    // a run between creating its pid file and writing its pid
    throw new HelixError('a run is starting; try again in a moment', EXIT.ERROR)
  }
  // A pid file whose start field is missing, unparsable or in the future was not
  // written by a run: never signal the process it names (a decoy).
  if (rec.pid > 0 && !validStartField(rec.started)) {
    removeIfSame()
    throw new HelixError(`PID file names pid ${rec.pid} with an invalid start time '${rec.started}'; not signalling it (removed the file)`, EXIT.ERROR)
  }
  const sameRun = opts.alive ? true : pidMatchesRecord(rec.pid, rec.started)
  if (!(rec.pid > 0) || !alive(rec.pid) || !sameRun) {
    removeIfSame()
    throw new HelixError(`stale PID file removed (${stalePidWords(rec.pid, alive)})`, EXIT.ERROR)
  }
  const send = (sig: NodeJS.Signals) => {
    try {
      kill(rec.pid, sig)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw new HelixError(`cannot signal pid ${rec.pid}: ${errorMessage(error)}`, EXIT.ERROR)
    }
  }
  send('SIGTERM')
  for (let waited = 0; waited < graceMs; waited += pollMs) {
    if (!alive(rec.pid)) {
      removeIfSame()
      return {pid: rec.pid, killed: false}
    }
    await sleep(pollMs)
  }
  if (!alive(rec.pid)) {
    removeIfSame()
    return {pid: rec.pid, killed: false}
  }
  send('SIGKILL')
  for (let waited = 0; waited < 5_000 && alive(rec.pid); waited += pollMs) await sleep(pollMs)
  if (alive(rec.pid)) throw new HelixError(`pid ${rec.pid} is still running after SIGKILL`, EXIT.ERROR)
  // a SIGKILLed run could not clean up after itself
  removeIfSame()
  let released: string[] = []
  const p = opts.paths
  if (p.file && p.dir && p.lockDir && p.root) released = await releaseClaimsOf(p as ProjectPaths, rec.pid)
  return {pid: rec.pid, killed: true, released}
}
