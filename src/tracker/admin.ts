/**
 * Tracker administration: init, doctor (diagnose + repair), and beads (`bd`)
 * JSONL import/export.
 */
import {promises as fsp} from 'node:fs'
import path from 'node:path'
import {HelixError, EXIT, errorMessage} from '../util/errors.js'
import type {ProjectPaths} from '../util/root.js'
import type {Bead, Dependency, ProcessProbe, TrackerSnapshot} from './types.js'
import {lineFindings, malformedMessage, parseTrackerLenient, rejectedFileName, serializeBead, serializeTrackerBuffer, supersededDuplicateLines, type MalformedLine} from './codec.js'
import {acquireTrackerLock, appendFileDurable, inspectLock, lockTimeoutSec, mutateTracker, readTracker, readTrackerRaw, removeStaleTempFiles, TEMP_FILE_PATTERN, writeFileDurable, type LockInfo} from './store.js'
import {sanitize} from '../util/sanitize.js'
import {runStateLockDir} from '../state/run-state.js'
import {FUTURE_SKEW_MS} from './liveness.js'
import {depIds, statusOf} from './queries.js'
import {claimLiveness} from './liveness.js'
import {ensureIgnored, gitignorePath} from '../util/runtime-paths.js'
import {beadProblems} from './schema.js'
import {makeDirSync} from '../util/files.js'

// -------------------------------------------------------------------- init

export async function initTracker(paths: ProjectPaths, env: NodeJS.ProcessEnv = process.env): Promise<{created: string[]; file: string; ignored: string[]}> {
  const created: string[] = []
  makeDirSync(paths.dir, "run 'helix tracker init' again")
  const ddx = path.join(paths.root, '.ddx')
  makeDirSync(ddx, "run 'helix tracker init' again")
  try {
    const fh = await fsp.open(paths.file, 'wx')
    await fh.close()
    created.push(paths.file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  const config = path.join(ddx, 'config.yaml')
  const prefix = env.DDX_BEAD_PREFIX?.trim() || 'hx'
  try {
    const fh = await fsp.open(config, 'wx')
    await fh.writeFile(`version: "1.0"\nbead:\n  id_prefix: ${JSON.stringify(prefix)}\n`)
    await fh.close()
    created.push(config)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  // SPEC 16.1: helix's runtime files never get committed by an agent's `git add -A`
  const ignored = ensureIgnored(gitignorePath(paths.root))
  return {created, file: paths.file, ignored}
}

// ------------------------------------------------------------------ doctor

export interface DoctorReport {
  ok: boolean
  file: string
  beads: number
  malformed: Array<{line: number; reason: string}>
  duplicates: string[]
  dangling_deps: Array<{id: string; depends_on: string}>
  dangling_parents: Array<{id: string; parent: string}>
  cycles: string[][]
  stale_claims: Array<{id: string; owner: string | null; age_seconds: number | null; pid: number | null}>
  invalid_fields: Array<{id: string; problem: string}>
  leftover_temp_files: string[]
  /** a lock directory that outlived its writer (DDx lock whose pid is dead, or an old helix lock) */
  stale_lock: {path: string; age_seconds: number; ddx_pid: number | null; future?: boolean; why?: string} | null
  /** the lock directory right now: age, owner, stale or not (SPEC 13.1) */
  lock?: LockInfo | null
  /** other lock directories present (`.ddx/run-state.lock`, `.ddx/helix.pid.lock`) */
  other_locks?: LockInfo[]
  /** lines holding bytes that are not valid UTF-8 (kept as they are; SPEC 13.2) */
  invalid_utf8_lines?: number[]
  /** records with the same key twice (JSON.parse keeps the last) */
  duplicate_keys?: Array<{line: number; keys: string[]}>
  /** timestamps more than 5 minutes in the future (a future claimed-at is no evidence of age, SPEC 13.3) */
  future_timestamps?: Array<{id: string; key: string; value: string}>
  /** temp files of killed writers that --repair removed */
  removed_temp_files?: string[]
  repaired?: {rejected_file: string | null; lines_moved: number}
}

function findCycles(snap: TrackerSnapshot): string[][] {
  const color = new Map<string, 1 | 2>()
  const cycles: string[][] = []
  const seenCycle = new Set<string>()
  const stack: string[] = []
  const visit = (id: string): void => {
    color.set(id, 1)
    stack.push(id)
    const b = snap.byId.get(id)
    for (const d of b ? depIds(b) : []) {
      if (!snap.byId.has(d)) continue
      const c = color.get(d)
      if (c === 1) {
        const cyc = [...stack.slice(stack.indexOf(d)), d]
        const key = [...cyc.slice(0, -1)].sort().join('\u0000')
        if (!seenCycle.has(key)) {
          seenCycle.add(key)
          cycles.push(cyc)
        }
      } else if (c === undefined) visit(d)
    }
    stack.pop()
    color.set(id, 2)
  }
  for (const b of snap.beads) if (!color.has(b.id)) visit(b.id)
  return cycles
}

function diagnose(snap: TrackerSnapshot, malformed: MalformedLine[], file: string): DoctorReport {
  const r: DoctorReport = {
    ok: true,
    file,
    beads: snap.beads.length,
    malformed: malformed.map((m) => ({line: m.line, reason: m.reason})),
    duplicates: snap.duplicateIds,
    dangling_deps: [],
    dangling_parents: [],
    cycles: findCycles(snap),
    stale_claims: [],
    invalid_fields: [],
    leftover_temp_files: [],
    stale_lock: null,
  }
  for (const b of snap.beads) {
    for (const d of depIds(b)) if (!snap.byId.has(d)) r.dangling_deps.push({id: b.id, depends_on: d})
    if (typeof b.parent === 'string' && b.parent !== '' && !snap.byId.has(b.parent)) r.dangling_parents.push({id: b.id, parent: b.parent})
  }
  return r
}

function finishOk(r: DoctorReport): DoctorReport {
  r.ok =
    r.malformed.length === 0 &&
    r.duplicates.length === 0 &&
    r.dangling_deps.length === 0 &&
    r.dangling_parents.length === 0 &&
    r.cycles.length === 0 &&
    r.stale_claims.length === 0 &&
    r.invalid_fields.length === 0 &&
    r.stale_lock === null
  return r
}

export interface DoctorOptions {
  probe: ProcessProbe
  now?: Date
  thresholdSec: number
  repair?: boolean
}

/**
 * SPEC 2.5 doctor: malformed lines, duplicate ids, dangling deps/parents,
 * dependency cycles, stale claims. With `repair`, malformed lines (and the
 * losing copies of duplicate ids) move verbatim to
 * `<file>.rejected-<timestamp>` and the rest is rewritten canonically.
 */
export async function doctorTracker(paths: ProjectPaths, opts: DoctorOptions): Promise<DoctorReport> {
  const now = opts.now ?? new Date()
  let raw = await readTrackerRaw(paths.file)
  let {snapshot, malformed} = parseTrackerLenient(raw)
  let repaired: DoctorReport['repaired']
  let removedTemp: string[] | undefined
  if (opts.repair) {
    const lock = await acquireTrackerLock(paths, lockTimeoutSec())
    try {
      removedTemp = await removeStaleTempFiles(paths, now.getTime())
      raw = await readTrackerRaw(paths.file)
      ;({snapshot, malformed} = parseTrackerLenient(raw))
      const moved = [...malformed.map((m) => ({line: m.line, bytes: m.bytes})), ...supersededDuplicateLines(raw, snapshot)].sort((a, b) => a.line - b.line)
      let rejected: string | null = null
      if (moved.length) {
        rejected = rejectedFileName(paths.file, now)
        // byte for byte, invalid UTF-8 included (SPEC 13.2)
        await appendFileDurable(rejected, Buffer.concat(moved.flatMap((m) => [m.bytes, Buffer.from('\n')])))
      }
      const out = serializeTrackerBuffer(snapshot.beads)
      if (!out.equals(raw)) await writeFileDurable(paths.file, out)
      repaired = {rejected_file: rejected, lines_moved: moved.length}
    } finally {
      await lock.release()
    }
  }
  const r = diagnose(snapshot, repaired ? [] : malformed, paths.file)
  if (repaired) {
    r.duplicates = []
    r.repaired = repaired
  }
  if (removedTemp) r.removed_temp_files = removedTemp
  const findings = lineFindings(raw)
  r.invalid_utf8_lines = findings.invalidUtf8
  r.duplicate_keys = findings.duplicateKeys
  r.future_timestamps = []
  for (const b of snapshot.beads) {
    for (const key of ['created_at', 'updated_at', 'claimed-at']) {
      const v = b[key]
      if (typeof v !== 'string') continue
      const t = Date.parse(v)
      if (!Number.isNaN(t) && t - now.getTime() > FUTURE_SKEW_MS) r.future_timestamps.push({id: b.id, key, value: v})
    }
  }
  for (const b of snapshot.beads) {
    if (statusOf(b) !== 'in_progress') continue
    const l = await claimLiveness(b, opts.probe, now, opts.thresholdSec)
    if (!l.live) r.stale_claims.push({id: b.id, owner: typeof b.owner === 'string' ? b.owner : null, age_seconds: l.ageSeconds, pid: l.pid})
  }
  const lock = await inspectLock(paths.lockDir, now, (pid) => opts.probe.isRunning(pid))
  r.lock = lock
  // helix's other lock directories: run-state's and the pid file's guard
  r.other_locks = []
  for (const dir of [runStateLockDir(paths.runState), `${paths.pidFile}.lock`]) {
    const l = await inspectLock(dir, now, (pid) => opts.probe.isRunning(pid))
    if (l) r.other_locks.push(l)
  }
  if (lock?.stale) r.stale_lock = {path: lock.path, age_seconds: lock.age_seconds, ddx_pid: lock.ddx_pid, future: lock.future, why: lock.why}
  for (const b of snapshot.beads) for (const problem of beadProblems(b)) r.invalid_fields.push({id: b.id, problem})
  try {
    r.leftover_temp_files = (await fsp.readdir(paths.dir)).filter((f) => TEMP_FILE_PATTERN.test(f)).map((f) => path.join(paths.dir, f))
  } catch (error) {
    // no directory: nothing left over
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  finishOk(r)
  if (r.duplicate_keys.length || r.future_timestamps.length) r.ok = false
  return r
}

export function doctorText(r: DoctorReport): string {
  const out: string[] = []
  const s = sanitize
  for (const m of r.malformed) out.push(malformedMessage(r.file, m).replace(/ — run .*$/, ''))
  for (const d of r.duplicates) out.push(`duplicate id ${s(d)} (the last line wins)`)
  for (const d of r.duplicate_keys ?? []) out.push(`line ${d.line}: duplicate key(s) ${d.keys.map((k) => s(k)).join(', ')} in one record (the last one counts)`)
  for (const n of r.invalid_utf8_lines ?? []) out.push(`line ${n}: invalid UTF-8 (kept byte for byte)`)
  for (const f of r.future_timestamps ?? []) out.push(`${s(f.id)}: ${f.key} ${s(f.value)} is in the future${f.key === 'claimed-at' ? ' (no evidence of age)' : ''}`)
  for (const d of r.dangling_deps) out.push(`${s(d.id)} depends on missing ${s(d.depends_on)}`)
  for (const p of r.dangling_parents) out.push(`${s(p.id)} has missing parent ${s(p.parent)}`)
  for (const c of r.cycles) out.push(`dependency cycle: ${c.map((x) => s(x)).join(' -> ')}`)
  for (const c of r.stale_claims) out.push(`stale claim on ${s(c.id)} (owner=${s(c.owner ?? 'unknown')}, age=${c.age_seconds ?? '?'}s, pid=${c.pid ?? 'unknown'}) — 'helix recover' reclaims helix-owned ones`)
  for (const f of r.invalid_fields) out.push(`${s(f.id)}: invalid field ${s(f.problem)}`)
  for (const l of [r.lock, ...(r.other_locks ?? [])]) {
    if (!l) continue
    const who = l.owner === 'ddx' ? `DDx writer${l.ddx_pid === null ? '' : ` pid ${l.ddx_pid}`}` : 'helix writer'
    // a lock made within the last second can read a hair ahead of this clock: 0s old, not -1s
    const age = l.future ? `${-l.age_seconds}s in the future` : `${Math.max(0, l.age_seconds)}s old`
    out.push(`lock ${s(l.path)}: ${who}, ${age}, ${l.stale ? `stale (${l.why}) — the next writer breaks it` : `not stale (${l.why})`}`)
  }
  for (const f of r.leftover_temp_files) out.push(`leftover temp file ${s(f)} (from an interrupted writer; safe to delete)`)
  for (const f of r.removed_temp_files ?? []) out.push(`removed old temp file ${s(f)}`)
  if (r.repaired) {
    out.push(
      r.repaired.rejected_file
        ? `repaired: moved ${r.repaired.lines_moved} line(s) to ${r.repaired.rejected_file} and rewrote ${r.file}`
        : `repaired: nothing to move; ${r.file} is canonical`,
    )
  }
  if (r.ok) out.push(`tracker ok: ${r.beads} bead(s) in ${r.file}`)
  else if (!r.repaired && r.malformed.length + r.duplicates.length > 0) out.push("run 'helix tracker doctor --repair' to move malformed and duplicate lines aside")
  return out.join('\n') + '\n'
}

// ------------------------------------------------------------- bd interop

export interface InteropReport {
  file: string
  count: number
  skipped: Array<{line?: number; id?: string; why: string}>
}

const DEFAULT_BD_FILE = path.join('.beads', 'issues.jsonl')

/** bd record → DDx bead. */
export function fromBd(rec: Record<string, unknown>): Bead {
  const b: Bead = {id: rec.id as string}
  for (const [k, v] of Object.entries(rec)) {
    if (k === 'acceptance_criteria') b.acceptance = v as string
    else if (k === 'assignee') b.owner = v as string
    else if (k === 'dependencies') continue
    else b[k] = v
  }
  const deps: Dependency[] = []
  for (const d of Array.isArray(rec.dependencies) ? rec.dependencies : []) {
    if (!d || typeof d !== 'object') continue
    const dep = d as Dependency
    if (dep.type === 'parent-child') {
      if (typeof dep.depends_on_id === 'string' && dep.depends_on_id !== '' && b.parent === undefined) b.parent = dep.depends_on_id
    } else deps.push({...dep, issue_id: typeof dep.issue_id === 'string' ? dep.issue_id : b.id})
  }
  if (deps.length) b.dependencies = deps
  if (b.schema_version === undefined) b.schema_version = 1
  return b
}

/** DDx bead → bd record. */
export function toBd(b: Bead): Record<string, unknown> {
  const r: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(b)) {
    if (k === 'acceptance') r.acceptance_criteria = v
    else if (k === 'owner') r.assignee = v
    else if (k === 'parent' || k === 'dependencies') continue
    else r[k] = v
  }
  const deps: unknown[] = Array.isArray(b.dependencies) ? b.dependencies.map((d) => ({...d})) : []
  if (typeof b.parent === 'string' && b.parent !== '') deps.push({issue_id: b.id, depends_on_id: b.parent, type: 'parent-child'})
  if (deps.length) r.dependencies = deps
  return r
}

export async function importFromBd(paths: ProjectPaths, file?: string): Promise<InteropReport> {
  const src = path.resolve(paths.root, file ?? DEFAULT_BD_FILE)
  let text: string
  try {
    text = await fsp.readFile(src, 'utf8')
  } catch (error) {
    throw new HelixError(`cannot read ${src}: ${(error as NodeJS.ErrnoException).code ?? errorMessage(error)}`, EXIT.ERROR)
  }
  const {snapshot, malformed} = parseTrackerLenient(text)
  const skipped: InteropReport['skipped'] = malformed.map((m) => ({line: m.line, why: `malformed (${m.reason})`}))
  for (const d of snapshot.duplicateIds) skipped.push({id: d, why: 'duplicate id in the bd file (the last line was imported)'})
  const count = await mutateTracker(paths, (snap) => {
    const add: Bead[] = []
    for (const rec of snapshot.beads) {
      if (snap.byId.has(rec.id)) {
        skipped.push({id: rec.id, why: 'already in the tracker'})
        continue
      }
      add.push(fromBd(rec as Record<string, unknown>))
    }
    return {beads: add.length ? [...snap.beads, ...add] : null, result: add.length}
  })
  return {file: src, count, skipped}
}

export async function exportToBd(paths: ProjectPaths, file?: string): Promise<{text: string; report: InteropReport}> {
  const snap = await readTracker(paths.file)
  const text = snap.beads.map((b) => serializeBead(toBd(b) as Bead)).join('\n') + (snap.beads.length ? '\n' : '')
  const dest = file === undefined ? '-' : path.resolve(paths.root, file)
  if (dest !== '-') {
    await fsp.mkdir(path.dirname(dest), {recursive: true})
    await writeFileDurable(dest, text)
  }
  return {text, report: {file: dest, count: snap.beads.length, skipped: []}}
}
