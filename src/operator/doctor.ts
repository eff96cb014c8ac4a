/**
 * `helix doctor` (SPEC 7.2): node version, agent binaries, tracker health, stale
 * tracker lock, stale run mutex. Read-only: it reports each problem with the
 * command that fixes it and never repairs anything itself.
 */
import {existsSync, statSync} from 'node:fs'
import path from 'node:path'
import {NOT_A_PROJECT, projectPaths, type ProjectPaths} from '../util/root.js'
import {HelixError, errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {readPidFile} from '../state/pidfile.js'
import {pidAlive} from '../proc/process.js'
import {inspectLock, LOCK_STALE_MS, type LockInfo} from '../tracker/store.js'
import {doctorTracker, type DoctorReport as TrackerDoctorReport} from '../tracker/admin.js'
import {orphanThresholdSec} from '../tracker/liveness.js'
import {realProbe} from '../proc/process-probe.js'
import type {ProbeAgentFlags} from '../agents/doctor-probe.js'
import {findOnPath} from '../agents/resolve.js'
import {pidMatchesRecord} from '../proc/pid-identity.js'
import {worktreeChecks} from '../recovery/worktrees.js'
import {reconcileChecks} from '../recovery/reconcile-checks.js'
import {DEFAULT_SANDBOX, probeSandbox} from '../proc/sandbox.js'
import {preflightConfine, sandboxSpecOf} from '../agents/confine.js'
import type {Confine} from '../agents/types.js'
import {CONFIG_PATH, loadConfig, type ProjectConfig} from '../config/project-config.js'

import type {CheckLevel, DoctorCheck} from './doctor-check.js'

export type {CheckLevel, DoctorCheck}

export const MIN_NODE = [20, 19, 0] as const

export function nodeVersionCheck(version: string = process.versions.node): DoctorCheck {
  const parts = version.split('.').map((n) => Number(n))
  let ok = true
  for (let i = 0; i < 3; i++) {
    const a = parts[i] ?? 0
    if (a !== MIN_NODE[i]) {
      ok = a > MIN_NODE[i]
      break
    }
  }
  return ok
    ? {level: 'ok', what: 'node', detail: `v${version}`}
    : {level: 'fail', what: 'node', detail: `v${version} is older than v${MIN_NODE.join('.')}`, fix: `install Node ${MIN_NODE.join('.')} or newer`}
}

function looksLikePath(name: string): boolean {
  return name.includes('/')
}

function isExecutable(file: string): boolean {
  try {
    const st = statSync(file)
    return st.isFile() && (st.mode & 0o111) !== 0
  } catch {
    // missing or unreadable: not an executable hook
    return false
  }
}

/**
 * The configured implementation agent (HELIX_AGENT, default codex) must exist;
 * the configured review agent too when HELIX_REVIEW_AGENT names one. Other
 * known agents are listed for information.
 */
export function agentChecks(env: NodeJS.ProcessEnv, root: string, chosen: DoctorAgentFlags = {}): DoctorCheck[] {
  const out: DoctorCheck[] = []
  if (chosen.claude && chosen.codex) return [{level: 'fail', what: 'agent flags', detail: '--claude and --codex cannot be used together', fix: 'pass one of them'}]
  // the agent a `helix run` with the same flags would use
  const impl = (chosen.claude ? 'claude' : chosen.codex ? 'codex' : chosen.agent?.trim()) || env.HELIX_AGENT?.trim() || 'codex'
  const review = chosen.reviewAgent?.trim() || env.HELIX_REVIEW_AGENT?.trim() || ''
  const names = [impl, ...(review && review !== impl ? [review] : [])]
  // codex and claude are listed for information only when a run could use them: a project whose
  // agents are commands (./agent.sh) is not asked for them
  const isKnown = (n: string) => ['codex', 'claude'].includes(path.basename(n))
  if (names.some(isKnown)) for (const known of ['codex', 'claude']) if (!names.includes(known)) names.push(known)
  for (const name of names) {
    const required = name === impl || name === review
    const role = name === impl ? 'implementation agent' : name === review ? 'review agent' : 'agent'
    const shown = sanitize(name)
    const found = looksLikePath(name) ? (isExecutable(path.resolve(root, name)) ? path.resolve(root, name) : undefined) : findOnPath(name, env)
    if (found) out.push({level: 'ok', what: `${role} ${shown}`, detail: sanitize(found)})
    else if (required)
      out.push({
        level: 'fail',
        what: `${role} ${shown}`,
        detail: looksLikePath(name) ? 'not an executable file' : 'not found on PATH',
        fix: `install ${shown} or choose another agent (${name === review ? '--review-agent / HELIX_REVIEW_AGENT' : '--agent / HELIX_AGENT'} / '${name === review ? 'review-agent' : 'agent'}' in ${CONFIG_PATH})`,
      })
    else out.push({level: 'warn', what: `${role} ${shown}`, detail: 'not found on PATH (only needed when selected)'})
  }
  return out
}

function rel(paths: Pick<ProjectPaths, 'root'>, file: string): string {
  const r = path.relative(paths.root, file)
  return r && !r.startsWith('..') ? r : file
}

function few<T>(items: T[], show: (t: T) => string, n = 3): string {
  return items.slice(0, n).map(show).join(', ') + (items.length > n ? ', …' : '')
}

/**
 * Tracker health from the tracker's own doctor (SPEC 2.5, read-only here), plus
 * its stale-lock finding. FAIL: malformed lines, dependency cycles, stale claims,
 * a stale lock. WARN (worth a look, harmless to runs): duplicate ids, references
 * to missing beads, invalid field values, leftover temp files.
 */
export async function trackerChecks(paths: ProjectPaths, env: NodeJS.ProcessEnv, now: Date): Promise<DoctorCheck[]> {
  const file = rel(paths, paths.file)
  const lock = rel(paths, paths.lockDir)
  if (!existsSync(paths.file)) {
    return [{level: 'warn', what: 'tracker', detail: `${file} does not exist`, fix: "run 'helix tracker init'"}, lockOnly(await inspectLock(paths.lockDir, now), lock)]
  }
  let r: TrackerDoctorReport
  try {
    r = await doctorTracker(paths, {probe: realProbe(), now, thresholdSec: orphanThresholdSec(env)})
  } catch (error) {
    return [
      {level: 'fail', what: 'tracker', detail: errorMessage(error).split('\n')[0], fix: `check ${file} and its permissions`},
      lockOnly(await inspectLock(paths.lockDir, now), lock),
    ]
  }
  const out: DoctorCheck[] = []
  const inspect = "inspect with 'helix tracker doctor'"
  if (r.malformed.length) {
    const first = r.malformed[0]
    out.push({level: 'fail', what: 'tracker', detail: `${r.malformed.length} malformed line(s), first ${file}:${first.line} (${first.reason})`, fix: `${inspect}; 'helix tracker doctor --repair' sets them aside`})
  }
  if (r.cycles.length) {
    out.push({level: 'fail', what: 'tracker', detail: `${r.cycles.length} dependency cycle(s): ${few(r.cycles, (c) => c.join('→'), 2)}`, fix: "break one edge with 'helix tracker dep remove <id> <depends-on>'"})
  }
  if (r.duplicates.length) {
    out.push({level: 'warn', what: 'tracker', detail: `${r.duplicates.length} duplicate id(s) (last line wins): ${few(r.duplicates, (d) => d)}`, fix: "'helix tracker doctor --repair'"})
  }
  const dangling = [...r.dangling_deps.map((d) => `${d.id}→${d.depends_on}`), ...r.dangling_parents.map((d) => `${d.id} parent ${d.parent}`)]
  if (dangling.length) {
    out.push({level: 'warn', what: 'tracker', detail: `${dangling.length} reference(s) to missing beads: ${few(dangling, (d) => d, 2)}`, fix: `${inspect}; 'helix tracker dep remove' or 'helix tracker update <id> --parent'`})
  }
  if (r.invalid_fields.length) {
    out.push({level: 'warn', what: 'tracker', detail: `${r.invalid_fields.length} invalid field value(s): ${few(r.invalid_fields, (f) => `${f.id} ${f.problem}`, 1)}`, fix: inspect})
  }
  if (r.leftover_temp_files.length) {
    out.push({level: 'warn', what: 'tracker', detail: `${r.leftover_temp_files.length} leftover temp file(s) from an interrupted write: ${few(r.leftover_temp_files.map((f) => rel(paths, f)), (f) => f, 2)}`, fix: 'delete them (the tracker itself is intact)'})
  }
  // SPEC 13.3: a claimed-at more than 5 minutes ahead is no evidence of age, so the age rule
  // never releases that claim; `helix recover <id>` does when its claimer is not live
  const future = r.future_timestamps ?? []
  const futureClaims = future.filter((f) => f.key === 'claimed-at')
  if (futureClaims.length) {
    const ids = [...new Set(futureClaims.map((f) => f.id))]
    out.push({
      level: 'warn',
      what: 'claims',
      detail: `${ids.length} claim(s) with claimed-at in the future (no evidence of age, never reclaimed by age): ${few(futureClaims, (f) => `${f.id} (${f.value})`, 2)}`,
      fix: ids.length === 1 ? `'helix recover ${ids[0]}' (releases it when its claimer is not live)` : "'helix recover <id>' for each (releases it when its claimer is not live)",
    })
  }
  const futureOther = future.filter((f) => f.key !== 'claimed-at')
  if (futureOther.length) {
    out.push({level: 'warn', what: 'tracker', detail: `${futureOther.length} timestamp(s) in the future (clock skew?): ${few(futureOther, (f) => `${f.id} ${f.key}`, 2)}`, fix: inspect})
  }
  if (r.stale_claims.length) {
    out.push({level: 'fail', what: 'claims', detail: `${r.stale_claims.length} stale claim(s) (orphaned in_progress): ${few(r.stale_claims, (c) => `${c.id}${c.owner ? ` by ${c.owner}` : ''}`)}`, fix: "run 'helix recover' (helix's own claims) or 'helix tracker update <id> --unclaim'"})
  }
  if (!out.some((c) => c.what === 'tracker')) out.unshift({level: 'ok', what: 'tracker', detail: `${file}: ${r.beads} beads`})
  out.push(r.stale_lock ? staleLock(r.stale_lock, lock) : lockOnly(await inspectLock(paths.lockDir, now), lock, true))
  // SPEC 13.1: each lock, not only the tracker's (run-state's, the pid file's guard)
  for (const l of r.other_locks ?? []) {
    const name = rel(paths, l.path)
    const age = l.future ? `mtime ${-l.age_seconds}s in the future` : `touched ${l.age_seconds}s ago`
    out.push(
      l.stale
        ? {level: 'warn', what: 'lock', detail: `stale lock directory ${name} (${age}, ${l.why ?? 'no live holder'})`, fix: `the next writer breaks it, or remove it: rm -r ${name}`}
        : {level: 'ok', what: 'lock', detail: `${name} held by a helix writer (${age})`},
    )
  }
  return out
}

function staleLock(l: LockInfo, lock: string): DoctorCheck {
  const who = l.why ?? (l.ddx_pid === null ? 'no live holder' : `DDx writer pid ${l.ddx_pid} is not running`)
  const when = l.future ? `mtime ${-l.age_seconds}s in the future` : `last touched ${l.age_seconds}s ago, ${who}`
  return {level: 'fail', what: 'tracker lock', detail: `stale lock directory ${lock} (${when})`, fix: `remove it: rm -r ${lock}`}
}

/** The lock line; `checked` when the tracker doctor already ruled out staleness. */
function lockOnly(l: LockInfo | null, lock: string, checked = false): DoctorCheck {
  if (!l) return {level: 'ok', what: 'tracker lock', detail: 'not held'}
  if (!checked && l.age_seconds * 1000 > LOCK_STALE_MS * 5 && (l.ddx_pid === null || !pidAlive(l.ddx_pid))) return staleLock(l, lock)
  return {level: 'ok', what: 'tracker lock', detail: `held by ${l.ddx_pid !== null ? `DDx writer pid ${l.ddx_pid}` : 'a helix writer'} (touched ${l.age_seconds}s ago)`}
}

export function pidCheck(paths: ProjectPaths): DoctorCheck {
  const file = rel(paths, paths.pidFile)
  const rec = readPidFile(paths.pidFile)
  if (!rec) return {level: 'ok', what: 'run mutex', detail: 'no active run'}
  const alive = rec.pid > 0 && pidAlive(rec.pid)
  if (alive && pidMatchesRecord(rec.pid, rec.started)) return {level: 'ok', what: 'run mutex', detail: `active run pid=${rec.pid} started ${rec.started}`}
  return {
    level: 'fail',
    what: 'run mutex',
    detail: alive
      ? `stale PID file ${file} (pid=${rec.pid} now belongs to a process started after ${rec.started})`
      : `stale PID file ${file} (pid=${rec.pid} is not running)`,
    fix: `run 'helix status' or 'helix stop' (removes it), or rm ${file}`,
  }
}

/** a review agent that cannot review is caught here, not after the first epic. */
async function reviewAgentChecks(env: NodeJS.ProcessEnv, root: string, flags: DoctorAgentFlags = {}): Promise<DoctorCheck[]> {
  const {checkReviewAgent, reviewFix} = await import('./review-preflight.js')
  const c = await checkReviewAgent(flags, env, root, sandboxWanted(env) && probeSandbox(DEFAULT_SANDBOX, env).ok ? doctorConfine(env, root) : undefined)
  if (!c || c.result.how === 'builtin') return []
  const what = `review agent ${sanitize(c.agent.name)} reviews`
  return c.result.ok ? [{level: 'ok', what, detail: c.result.detail}] : [{level: 'fail', what, detail: c.result.detail, fix: reviewFix(c.agent)}]
}

export interface DoctorReport {
  checks: DoctorCheck[]
  problems: number
  /** set when the cwd is not inside a project */
  not_a_project?: true
}

/** The agent flags of `helix run` that doctor accepts, to check the agent such a run would use (the probe's own type). */
export type DoctorAgentFlags = ProbeAgentFlags

export async function doctorReport(opts: {cwd?: string; env?: NodeJS.ProcessEnv; now?: Date; agents?: DoctorAgentFlags; remote?: string} = {}): Promise<DoctorReport> {
  const env = opts.env ?? process.env
  const now = opts.now ?? new Date()
  const cwd = opts.cwd ?? process.cwd()
  let paths: ProjectPaths
  try {
    paths = projectPaths(cwd, env)
  } catch (error) {
    if (!(error instanceof HelixError) || error.message !== NOT_A_PROJECT) throw error
    // outside a project: the environment checks still help, and the project line fails
    const checks: DoctorCheck[] = [
      nodeVersionCheck(),
      ...agentChecks(env, path.resolve(cwd), opts.agents),
      {level: 'fail', what: 'project', detail: 'not a helix project (no .ddx/ here or above)', fix: "run 'helix tracker init' at the project root"},
    ]
    return {checks, problems: checks.filter((c) => c.level === 'fail').length, not_a_project: true}
  }
  const checks: DoctorCheck[] = [
    nodeVersionCheck(),
    ...agentChecks(env, paths.root, opts.agents),
    ...(await trackerChecks(paths, env, now)),
    ...(await (await import('../agents/doctor-probe.js')).agentProbeChecks(env, paths.root, opts.agents)), // SPEC 14.6: --version, claude as root
    ...(await reviewAgentChecks(env, paths.root, opts.agents)),
    pidCheck(paths),
    ...(await worktreeChecks(paths, env)),
    ...(await reconcileChecks(paths, env)),
    sandboxCheck(env),
    // SPEC 19.1: with --remote, the remote answers and the clocks agree
    ...(opts.remote !== undefined ? await (await import('./doctor-remote.js')).remoteChecks(paths.root, opts.remote, env) : []),
  ]
  return {checks, problems: checks.filter((c) => c.level === 'fail').length}
}

/**
 * SPEC 21.2: whether `--sandbox` works here. A FAIL when the project asks for it
 * (HELIX_SANDBOX, or `sandbox: true` in the config), else a WARN.
 */
const sandboxWanted = (env: NodeJS.ProcessEnv): boolean => ['1', 'true', 'yes', 'on'].includes((env.HELIX_SANDBOX ?? '').trim().toLowerCase())

/** with the project's sandbox on, doctor's review probe runs confined as run's does, with the config's lists */
function doctorConfine(env: NodeJS.ProcessEnv, root: string): Confine {
  let config: ProjectConfig = {}
  try {
    config = loadConfig(root)
  } catch {
    // a config that does not load is reported on its own line; the probe runs with the defaults
  }
  return preflightConfine(sandboxSpecOf(config, env.HELIX_SANDBOX_NETWORK?.trim() === 'none' ? 'none' : 'on'))
}

export function sandboxCheck(env: NodeJS.ProcessEnv): DoctorCheck {
  const p = probeSandbox(DEFAULT_SANDBOX, env)
  if (p.ok) return {level: 'ok', what: 'sandbox', detail: 'bubblewrap works here (helix run --sandbox is available)'}
  const wanted = sandboxWanted(env)
  return {level: wanted ? 'fail' : 'warn', what: 'sandbox', detail: p.message, fix: "'apt-get install bubblewrap', or enable unprivileged user namespaces"}
}

const TAG: Record<CheckLevel, string> = {ok: 'ok  ', warn: 'WARN', fail: 'FAIL'}

export function renderDoctor(r: DoctorReport): string {
  const lines: string[] = []
  for (const c of r.checks) {
    lines.push(`${TAG[c.level]}  ${sanitize(c.what)}: ${sanitize(c.detail)}`)
    if (c.fix && c.level !== 'ok') lines.push(`      fix: ${sanitize(c.fix)}`)
  }
  lines.push(r.problems ? `${r.problems} problem(s) need fixing` : 'no problems found')
  return lines.join('\n') + '\n'
}
