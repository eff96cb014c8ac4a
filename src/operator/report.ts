/**
 * `helix status` body: reads the pid file, the tracker (no lock) and run-state,
 * builds the model and renders it. Returns the exact stdout text so a startup
 * fast path can call it without oclif. Never creates a log file; the only thing
 * it may change on disk is removing a pid file whose pid is dead (SPEC 7.1).
 */
import {existsSync, statSync} from 'node:fs'
import path from 'node:path'
import {projectPaths} from '../util/root.js'
import {readPidFile, removePidFileIf, runHolderAlive} from '../state/pidfile.js'
import {pidAlive} from '../proc/process.js'
import {readRunState, runStateProblem} from '../state/run-state.js'
import {readTrackerForQuery} from '../tracker/parse-cache.js'
import {buildStatusModel, statusJson, type PidInfo, type StatusModel} from './model.js'
import {trackerView} from './tracker-view.js'
import {loadConfig} from '../config/project-config.js'

export interface StatusOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  json?: boolean
  now?: Date
  width?: number
  height?: number
  /** where the stale-pid notice goes (default: stderr) */
  warn?: (line: string) => void
}

export interface PidCheck {
  live: PidInfo | null
  /** pid of a dead run whose file was removed */
  stale: number | null
  /** why that file was stale, in words (stalePidWords) */
  staleWhy?: string | null
}

/**
 * Why a removed pid file was stale, in words: its pid had ended, or now belongs to
 * another process (pid reuse, or a file a run never wrote), or it held no pid at all.
 */
export function stalePidWords(pid: number, alive: (pid: number) => boolean = pidAlive): string {
  if (!(pid > 0)) return 'it held no process id'
  return alive(pid) ? `pid=${pid} is another process, not a helix run` : `pid=${pid} was not running`
}

function youngerThan(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < ms
  } catch {
    // gone: not young
    return false
  }
}

/** Read the run mutex; remove it when its pid is dead, unreadable, or now belongs to a process younger than the file. */
export function checkPidFile(pidFile: string): PidCheck {
  const rec = readPidFile(pidFile)
  if (!rec) return {live: null, stale: null}
  if (runHolderAlive(rec)) return {live: {pid: rec.pid, started: rec.started}, stale: null}
  // an unreadable pid in a brand-new file is a run between its O_EXCL create and
  // its write: leave it alone
  if (!(rec.pid > 0) && youngerThan(pidFile, 5_000)) return {live: null, stale: null}
  // removed only if it still holds this record: a new run may have replaced it meanwhile
  removePidFileIf(pidFile, rec)
  return {live: null, stale: rec.pid, staleWhy: stalePidWords(rec.pid)}
}

export async function statusModel(opts: StatusOptions = {}): Promise<StatusModel> {
  const env = opts.env ?? process.env
  const now = opts.now ?? new Date()
  const paths = projectPaths(opts.cwd ?? process.cwd(), env)
  const pid = checkPidFile(paths.pidFile)
  const [snap, runState] = await Promise.all([readTrackerForQuery(paths.root, paths.file, env), readRunState(paths.runState)])
  const view = await trackerView(snap, now, env)
  // the project's config (what the next run uses); a bad file is one line, exit 1, as for run
  const config = loadConfig(paths.root)
  return buildStatusModel({
    config,
    snap,
    counts: view.counts,
    waiting: view.waiting,
    staleClaims: view.staleClaims,
    runState,
    livePid: pid.live,
    stalePid: pid.stale,
    staleWhy: pid.staleWhy ?? null,
    runStateProblem: runState ? null : runStateProblem(paths.runState),
    now,
  })
}

/**
 * The size status draws for: a terminal's own width and height; `COLUMNS`
 * (and `LINES`) when set, on a terminal or not; output to a pipe or a file without them
 * is not cut at all (Infinity), so `helix status | tail` and `> file` keep whole lines.
 */
export function outputSize(out: {isTTY?: boolean; columns?: number; rows?: number}, env: NodeJS.ProcessEnv = process.env): {width: number; height: number | undefined} {
  const num = (v: string | undefined): number | null => (v !== undefined && /^\d+$/.test(v.trim()) && Number(v) > 0 ? Number(v) : null)
  const cols = num(env.COLUMNS)
  const lines = num(env.LINES)
  if (out.isTTY) return {width: cols ?? out.columns ?? 80, height: lines !== null ? lines - 1 : out.rows ? out.rows - 1 /* the prompt's row */ : undefined}
  return {width: cols ?? Infinity, height: lines !== null ? lines - 1 : Infinity}
}

export function staleNotice(why: string): string {
  return `helix: stale PID file removed (${why})`
}

export async function statusOutput(opts: StatusOptions = {}): Promise<string> {
  const model = await statusModel(opts)
  if (model.staleWhy !== null) {
    const warn = opts.warn ?? ((line: string) => process.stderr.write(line + '\n'))
    warn(staleNotice(model.staleWhy))
  }
  // SPEC 20.5: the pull requests a --land pr run saw here (only when one ever ran: the file exists)
  const paths = projectPaths(opts.cwd ?? process.cwd(), opts.env ?? process.env)
  const prs = existsSync(path.join(paths.root, '.helix', 'pull-requests.json')) ? await (await import('./pr-status.js')).localPrRows(paths.root, opts.env ?? process.env, opts.now ?? new Date()) : null
  if (opts.json) return JSON.stringify({...statusJson(model), ...(prs ? {pull_requests: prs} : {})}, null, 2) + '\n'
  if (prs && prs.length > 0) {
    const {renderPrRows} = await import('./pr-status.js')
    const {renderStatusText} = await import('./text.js')
    const cut = (l: string) => (opts.width !== undefined && Number.isFinite(opts.width) && l.length > opts.width ? l.slice(0, Math.max(1, opts.width - 1)) + '…' : l)
    return renderStatusText(model, {width: opts.width, height: opts.height}) + renderPrRows(prs).map(cut).join('\n') + '\n'
  }
  // the text renderer is loaded only for the text form: `status --json` starts faster
  const {renderStatusText} = await import('./text.js')
  // below 60 columns (tmux split-window -h of an 80-column terminal gives 39): the compact layout
  if (opts.width !== undefined) {
    const {COMPACT_BELOW, renderCompact} = await import('./compact.js')
    if (opts.width < COMPACT_BELOW) return renderCompact(model, {width: opts.width, height: opts.height})
  }
  return renderStatusText(model, {width: opts.width, height: opts.height})
}
