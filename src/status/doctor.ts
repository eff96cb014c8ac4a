/**
 * `helix doctor` (SPEC 7.2): node version, agent binaries, tracker health, stale
 * tracker lock, stale run mutex. Read-only: it reports each problem with the
 * command that fixes it and never repairs anything itself.
 */
import {existsSync, readFileSync, readdirSync, statSync} from 'node:fs'
import path from 'node:path'
import {projectPaths, type ProjectPaths} from '../util/root.js'
import {pidAlive, readPidFile} from '../state/pidfile.js'
import {readTrackerText, LOCK_STALE_MS} from '../tracker/store.js'
import {parseTrackerLenient} from '../tracker/codec.js'
import {statusOf} from '../tracker/queries.js'
import {orphanThresholdSec, staleClaimIds} from '../tracker/liveness.js'
import {realProbe} from '../recovery/probe.js'
import {findOnPath} from '../agents/resolve.js'

export type CheckLevel = 'ok' | 'warn' | 'fail'

export interface DoctorCheck {
  level: CheckLevel
  what: string
  detail: string
  /** how to fix it (warn/fail) */
  fix?: string
}

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
    return false
  }
}

/**
 * The configured implementation agent (HELIX_AGENT, default codex) must exist;
 * the configured review agent too when HELIX_REVIEW_AGENT names one. Other
 * known agents are listed for information.
 */
export function agentChecks(env: NodeJS.ProcessEnv, root: string): DoctorCheck[] {
  const out: DoctorCheck[] = []
  const impl = env.HELIX_AGENT?.trim() || 'codex'
  const review = env.HELIX_REVIEW_AGENT?.trim() || ''
  const names = [impl, ...(review && review !== impl ? [review] : [])]
  for (const known of ['codex', 'claude']) if (!names.includes(known)) names.push(known)
  for (const name of names) {
    const required = name === impl || name === review
    const role = name === impl ? 'implementation agent' : name === review ? 'review agent' : 'agent'
    const found = looksLikePath(name) ? (isExecutable(path.resolve(root, name)) ? path.resolve(root, name) : undefined) : findOnPath(name, env)
    if (found) out.push({level: 'ok', what: `${role} ${name}`, detail: found})
    else if (required)
      out.push({
        level: 'fail',
        what: `${role} ${name}`,
        detail: looksLikePath(name) ? 'not an executable file' : 'not found on PATH',
        fix: `install ${name} or choose another agent (--agent / HELIX_AGENT${name === review ? ' / HELIX_REVIEW_AGENT' : ''})`,
      })
    else out.push({level: 'warn', what: `${role} ${name}`, detail: 'not found on PATH (only needed when selected)'})
  }
  return out
}

function rel(paths: Pick<ProjectPaths, 'root'>, file: string): string {
  const r = path.relative(paths.root, file)
  return r && !r.startsWith('..') ? r : file
}

export async function trackerChecks(paths: ProjectPaths, env: NodeJS.ProcessEnv, now: Date): Promise<DoctorCheck[]> {
  const file = rel(paths, paths.file)
  if (!existsSync(paths.file)) {
    return [{level: 'warn', what: 'tracker', detail: `${file} does not exist`, fix: "run 'helix tracker init'"}]
  }
  let text: string
  try {
    text = await readTrackerText(paths.file)
  } catch (error) {
    return [{level: 'fail', what: 'tracker', detail: (error as Error).message, fix: `check the permissions of ${file}`}]
  }
  const {snapshot: snap, malformed} = parseTrackerLenient(text)
  const out: DoctorCheck[] = []
  if (malformed.length) {
    const first = malformed[0]
    out.push({
      level: 'fail',
      what: 'tracker',
      detail: `${malformed.length} malformed line(s), first ${file}:${first.line} (${first.reason})`,
      fix: "run 'helix tracker doctor' to inspect, 'helix tracker doctor --repair' to set them aside",
    })
  }
  if (snap.duplicateIds.length) {
    out.push({
      level: 'warn',
      what: 'tracker',
      detail: `${snap.duplicateIds.length} duplicate id(s) (last line wins): ${snap.duplicateIds.slice(0, 3).join(', ')}${snap.duplicateIds.length > 3 ? ', …' : ''}`,
      fix: "run 'helix tracker doctor --repair'",
    })
  }
  const dangling: string[] = []
  for (const b of snap.beads) {
    for (const d of b.dependencies ?? []) if (!snap.byId.has(String(d.depends_on_id))) dangling.push(`${b.id}→${String(d.depends_on_id)}`)
    if (typeof b.parent === 'string' && b.parent !== '' && !snap.byId.has(b.parent)) dangling.push(`${b.id} parent ${b.parent}`)
  }
  if (dangling.length) {
    out.push({
      level: 'warn',
      what: 'tracker',
      detail: `${dangling.length} reference(s) to missing beads: ${dangling.slice(0, 2).join(', ')}${dangling.length > 2 ? ', …' : ''}`,
      fix: "inspect with 'helix tracker doctor'; fix with 'helix tracker dep remove' or 'helix tracker update --parent'",
    })
  }
  const threshold = orphanThresholdSec(env)
  const stale = await staleClaimIds(snap, realProbe(), now, threshold)
  if (stale.size) {
    out.push({
      level: 'fail',
      what: 'claims',
      detail: `${stale.size} stale claim(s) (orphaned in_progress): ${[...stale].slice(0, 3).join(', ')}${stale.size > 3 ? ', …' : ''}`,
      fix: "run 'helix recover' (helix's own claims) or 'helix tracker update <id> --unclaim'",
    })
  }
  if (!out.some((c) => c.what === 'tracker')) {
    const inProgress = snap.beads.filter((b) => statusOf(b) === 'in_progress').length
    out.unshift({level: 'ok', what: 'tracker', detail: `${file}: ${snap.beads.length} beads, ${inProgress} in progress`})
  }
  return out
}

/**
 * `.ddx/beads.lock` is stale when nobody refreshed it within the stale window
 * (helix holders touch it every LOCK_UPDATE_MS) and no live process is named in
 * it (DDx's writer leaves a `pid` file inside).
 */
export function lockCheck(paths: ProjectPaths, now: Date, staleMs: number = LOCK_STALE_MS): DoctorCheck {
  const lock = rel(paths, paths.lockDir)
  let st
  try {
    st = statSync(paths.lockDir)
  } catch {
    return {level: 'ok', what: 'tracker lock', detail: 'not held'}
  }
  const ageMs = now.getTime() - st.mtimeMs
  let holder: number | null = null
  try {
    if (st.isDirectory() && readdirSync(paths.lockDir).includes('pid')) {
      const n = Number(readFileSync(path.join(paths.lockDir, 'pid'), 'utf8').trim())
      if (Number.isSafeInteger(n) && n > 0) holder = n
    }
  } catch {
    // unreadable: judge by age alone
  }
  if (holder !== null && pidAlive(holder)) return {level: 'ok', what: 'tracker lock', detail: `held by live pid ${holder}`}
  if (ageMs <= staleMs) return {level: 'ok', what: 'tracker lock', detail: 'held (being refreshed)'}
  return {
    level: 'fail',
    what: 'tracker lock',
    detail: `stale lock directory ${lock} (last touched ${Math.round(ageMs / 1000)}s ago, no live holder)`,
    fix: `remove it: rm -r ${lock}  (writers also break it on their own after ${staleMs / 1000}s)`,
  }
}

export function pidCheck(paths: ProjectPaths): DoctorCheck {
  const file = rel(paths, paths.pidFile)
  const rec = readPidFile(paths.pidFile)
  if (!rec) return {level: 'ok', what: 'run mutex', detail: 'no active run'}
  if (rec.pid > 0 && pidAlive(rec.pid)) return {level: 'ok', what: 'run mutex', detail: `active run pid=${rec.pid} started ${rec.started}`}
  return {
    level: 'fail',
    what: 'run mutex',
    detail: `stale PID file ${file} (pid=${rec.pid} is not running)`,
    fix: `run 'helix status' or 'helix stop' (removes it), or rm ${file}`,
  }
}

export interface DoctorReport {
  checks: DoctorCheck[]
  problems: number
}

export async function doctorReport(opts: {cwd?: string; env?: NodeJS.ProcessEnv; now?: Date} = {}): Promise<DoctorReport> {
  const env = opts.env ?? process.env
  const now = opts.now ?? new Date()
  const paths = projectPaths(opts.cwd ?? process.cwd(), env)
  const checks: DoctorCheck[] = [
    nodeVersionCheck(),
    ...agentChecks(env, paths.root),
    ...(await trackerChecks(paths, env, now)),
    lockCheck(paths, now),
    pidCheck(paths),
  ]
  return {checks, problems: checks.filter((c) => c.level === 'fail').length}
}

const TAG: Record<CheckLevel, string> = {ok: 'ok  ', warn: 'WARN', fail: 'FAIL'}

export function renderDoctor(r: DoctorReport): string {
  const lines: string[] = []
  for (const c of r.checks) {
    lines.push(`${TAG[c.level]}  ${c.what}: ${c.detail}`)
    if (c.fix && c.level !== 'ok') lines.push(`      fix: ${c.fix}`)
  }
  lines.push(r.problems ? `${r.problems} problem(s) need fixing` : 'no problems found')
  return lines.join('\n') + '\n'
}
