/**
 * Tracker mutations (SPEC 2.3, 2.5). Every operation runs under mutateTracker
 * (lock → read → change → atomic write), throws HelixError with the SPEC
 * message and exit code, and stamps `updated_at`. `now` is injectable.
 */
import {randomBytes} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import os from 'node:os'
import {ClaimConflictError, HelixError, EXIT, errorMessage} from '../util/errors.js'
import type {ProjectPaths} from '../util/root.js'
import type {Bead, Dependency, ProcessProbe, TrackerSnapshot} from './types.js'
import {STATUSES} from './types.js'
import {mutateTracker, readTracker} from './store.js'
import {serializeBead} from './codec.js'
import {depIds, openDeps, ownClaim, statusOf} from './queries.js'
import {claimLiveness, claimPid} from './liveness.js'
import {beadProblems} from './schema.js'
import {isExecutableFile} from '../util/files.js'
import {FIELD_BY_KEY, verbatimFields} from './fields.js'

/** Keys that make up a claim (removed by unclaim/close/reopen; `owner` handled separately). */
export const CLAIM_KEYS = ['claimed-at', 'claimed-pid', 'claimed-machine', 'claimed-start', 'claim-token'] as const

export function isoNow(now: Date = new Date()): string {
  return now.toISOString()
}

export function notFound(id: string): HelixError {
  return new HelixError(`bead ${id} not found`, EXIT.ERROR)
}

function getBead(snap: TrackerSnapshot, id: string): Bead {
  const b = snap.byId.get(id)
  if (!b) throw notFound(id)
  return b
}

// ------------------------------------------------------------- validation

export function parsePriority(v: unknown): number {
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : ''
  if (!/^[0-4]$/.test(s)) throw new HelixError(`invalid priority '${String(v)}' (expected an integer 0-4)`, EXIT.ERROR)
  return Number(s)
}

export function parseStatus(v: string): string {
  if (!(STATUSES as readonly string[]).includes(v)) {
    throw new HelixError(`invalid status '${v}' (expected one of ${STATUSES.join(', ')})`, EXIT.ERROR)
  }
  return v
}

export function parseBool(key: string, v: unknown): boolean {
  if (v === true || v === false) return v
  if (v === 'true') return true
  if (v === 'false') return false
  throw new HelixError(`invalid value for ${key}: '${String(v)}' (expected true or false)`, EXIT.ERROR)
}

function parseInt0(key: string, v: string): number {
  if (!/^-?\d+$/.test(v.trim())) throw new HelixError(`invalid value for ${key}: '${v}' (expected an integer)`, EXIT.ERROR)
  return Number(v.trim())
}

function requireTitle(t: unknown): string {
  if (typeof t !== 'string' || t.trim() === '') throw new HelixError('title must not be blank', EXIT.ERROR)
  return t
}

export function splitList(s: string | string[] | undefined): string[] {
  if (s === undefined) return []
  const parts = Array.isArray(s) ? s.flatMap((x) => x.split(',')) : s.split(',')
  return parts.map((x) => x.trim()).filter((x) => x !== '')
}

/**
 * Value of a `--set key=value`: a string, except keys helix knows the type of
 * (priority, queue-rank, schema_version: integers; execution-eligible: boolean;
 * labels: comma list; status: one of the six).
 */
export function coerceSetValue(key: string, raw: string): unknown {
  switch (FIELD_BY_KEY.get(key)?.kind) {
    case 'id':
      throw new HelixError('cannot set id', EXIT.ERROR)
    case 'deps':
      throw new HelixError("use 'helix tracker dep add|remove' to change dependencies", EXIT.ERROR)
    case 'title':
      return requireTitle(raw)
    case 'priority':
      return parsePriority(raw)
    case 'int':
      return parseInt0(key, raw)
    case 'bool':
      return parseBool(key, raw)
    case 'list':
      return splitList(raw)
    case 'status':
      return parseStatus(raw)
    default:
      return raw
  }
}

/** Parse `k=v` pairs (from repeatable --set). */
export function parseSetPairs(pairs: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const p of pairs ?? []) {
    const i = p.indexOf('=')
    if (i <= 0) throw new HelixError(`invalid --set '${p}' (expected key=value)`, EXIT.ERROR)
    out[p.slice(0, i)] = p.slice(i + 1)
  }
  return out
}

// ------------------------------------------------------------------- ids

/** `bead.id_prefix` from `.ddx/config.yaml` (a tiny hand parse, no YAML dependency). */
export function configPrefix(configFile: string): string | undefined {
  let text: string
  try {
    text = readFileSync(configFile, 'utf8')
  } catch (error) {
    // no config file is the normal case; an unreadable one is a real problem
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw new HelixError(`cannot read ${configFile}: ${errorMessage(error)}`, EXIT.ERROR)
  }
  let inBead = false
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\s+#.*$/, '')
    if (/^\S/.test(line)) {
      inBead = /^bead\s*:\s*$/.test(line)
      const flat = /^bead\.id_prefix\s*:\s*(.+)$/.exec(line)
      if (flat) return unquote(flat[1])
      continue
    }
    if (inBead) {
      const m = /^\s+id_prefix\s*:\s*(.+)$/.exec(line)
      if (m) return unquote(m[1])
    }
  }
  return undefined
}

function unquote(s: string): string | undefined {
  const t = s.trim().replace(/^(['"])(.*)\1$/, '$2').trim()
  return t === '' ? undefined : t
}

export function idPrefix(paths: ProjectPaths, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.DDX_BEAD_PREFIX?.trim()
  if (fromEnv) return fromEnv
  return configPrefix(path.join(paths.root, '.ddx', 'config.yaml')) ?? configPrefix(path.join(paths.dir, 'config.yaml')) ?? 'hx'
}

export function newId(prefix: string, taken: (id: string) => boolean): string {
  for (;;) {
    const id = `${prefix}-${randomBytes(4).toString('hex')}`
    if (!taken(id)) return id
  }
}

// ----------------------------------------------------------------- create

export interface CreateInput {
  title: string
  type?: string
  priority?: number | string
  labels?: string[] | string
  parent?: string
  deps?: string[] | string
  description?: string
  acceptance?: string
  notes?: string
  specId?: string
  design?: string
  executionEligible?: boolean | string
  supersededBy?: string
  replaces?: string
  /** raw `--set k=v` values */
  set?: Record<string, string>
  now?: Date
  /** receives hook warnings (hook exit 2) */
  warn?: (line: string) => void
  /** run `.ddx/hooks/validate-bead-create` (default true) */
  hook?: boolean
}

function checkRefs(snap: TrackerSnapshot, parent: string | undefined, deps: string[]): void {
  if (parent !== undefined && parent !== '' && !snap.byId.has(parent)) throw new HelixError(`unknown parent '${parent}'`, EXIT.ERROR)
  for (const d of deps) if (!snap.byId.has(d)) throw new HelixError(`unknown dependency '${d}'`, EXIT.ERROR)
}

function hookPath(paths: ProjectPaths): string | undefined {
  const p = path.join(paths.root, '.ddx', 'hooks', 'validate-bead-create')
  return isExecutableFile(p) ? p : undefined
}

function firstLine(s: string): string {
  return (
    s
      .split('\n')
      .map((x) => x.trim())
      .find(Boolean) ?? ''
  )
}

/** DDx hook contract: record JSON on stdin; exit 1 refuses, exit 2 warns. Spawned with argv, never a shell. */
function runCreateHook(paths: ProjectPaths, bead: Bead, warn?: (line: string) => void): void {
  const hook = hookPath(paths)
  if (!hook) return
  const r = spawnSync(hook, [], {cwd: paths.root, input: serializeBead(bead) + '\n', encoding: 'utf8', timeout: 60_000, shell: false})
  const said = firstLine(`${r.stderr ?? ''}\n${r.stdout ?? ''}`)
  if (r.error) throw new HelixError(`validate-bead-create hook failed to run: ${r.error.message}`, EXIT.ERROR)
  if (r.status === 0) return
  if (r.status === 2) {
    warn?.(`helix: warning: validate-bead-create: ${said || 'hook warned (exit 2)'}`)
    return
  }
  throw new HelixError(`validate-bead-create refused the bead${said ? `: ${said}` : ` (exit ${r.status ?? r.signal})`}`, EXIT.ERROR)
}

/** Build, validate, hook-check and store a new bead; returns the stored record. */
export async function createBead(paths: ProjectPaths, input: CreateInput, env: NodeJS.ProcessEnv = process.env): Promise<Bead> {
  const now = isoNow(input.now)
  const title = requireTitle(input.title)
  const priority = input.priority === undefined ? 2 : parsePriority(input.priority)
  const deps = [...new Set(splitList(input.deps))]
  const set = input.set ?? {}
  const bead: Bead = {
    id: '',
    title,
    status: 'open',
    priority,
    issue_type: input.type?.trim() || 'task',
    schema_version: 1,
    created_at: now,
    updated_at: now,
  }
  const labels = splitList(input.labels)
  if (labels.length) bead.labels = labels
  // the free-text fields of the field table (parent, description, notes, spec-id, …)
  for (const f of verbatimFields('create')) {
    const v = (input as unknown as Record<string, unknown>)[f.prop!]
    if (typeof v === 'string' && (f.key !== 'parent' || v !== '')) bead[f.key] = v
  }
  if (input.executionEligible !== undefined) bead['execution-eligible'] = parseBool('execution-eligible', input.executionEligible)
  for (const [k, v] of Object.entries(set)) bead[k] = coerceSetValue(k, v)
  const prefix = idPrefix(paths, env)

  // Validate references and run the hook before taking the lock (the hook may be slow).
  const pre = await readTracker(paths.file)
  checkRefs(pre, bead.parent, deps)
  bead.id = newId(prefix, (id) => pre.byId.has(id))
  if (deps.length) bead.dependencies = deps.map((d) => ({issue_id: bead.id, depends_on_id: d, type: 'blocks', created_at: now}))
  const problems = await beadProblems(bead)
  if (problems.length) throw new HelixError(`invalid bead: ${problems[0]}`, EXIT.ERROR)
  if (input.hook !== false) runCreateHook(paths, bead, input.warn)

  return mutateTracker(paths, (snap) => {
    checkRefs(snap, bead.parent, deps)
    if (snap.byId.has(bead.id)) {
      const id = newId(prefix, (x) => snap.byId.has(x))
      bead.id = id
      if (bead.dependencies) for (const d of bead.dependencies) d.issue_id = id
    }
    return {beads: [...snap.beads, bead], result: bead}
  })
}

// ------------------------------------------------------------------ claim

export interface ClaimOptions {
  owner?: string
  pid?: number
  machine?: string
  startToken?: string
  probe: ProcessProbe
  thresholdSec: number
  now?: Date
}

function describeClaim(b: Bead): string {
  const owner = typeof b.owner === 'string' && b.owner !== '' ? b.owner : 'unknown'
  const pid = claimPid(b)
  return `already claimed by ${owner} (pid ${pid ?? 'unknown'})`
}

/** Compare-and-set claim on a bead of a locked snapshot (mutates `b`). */
async function applyClaim(snap: TrackerSnapshot, b: Bead, opts: ClaimOptions, now: Date): Promise<void> {
  const s = statusOf(b)
  if (s === 'in_progress') {
    // another owner's claim is never taken over, stale or not (SPEC 13.3): unclaim it first
    if (!ownClaim(b, opts.owner?.trim() || 'helix')) throw new ClaimConflictError(`cannot claim ${b.id}: ${describeClaim(b)}`)
    const l = await claimLiveness(b, opts.probe, now, opts.thresholdSec)
    if (l.live) throw new ClaimConflictError(`cannot claim ${b.id}: ${describeClaim(b)}`)
  } else if (s !== 'open') {
    throw new ClaimConflictError(`cannot claim ${b.id}: ${s}`)
  }
  const waiting = openDeps(snap, b)
  if (waiting.length) throw new ClaimConflictError(`cannot claim ${b.id}: waiting on dependencies ${waiting.join(', ')}`)
  b.status = 'in_progress'
  b.owner = opts.owner?.trim() || 'helix'
  b['claimed-at'] = isoNow(now)
  b['claimed-pid'] = opts.pid ?? process.pid
  b['claimed-machine'] = opts.machine ?? os.hostname()
  if (opts.startToken !== undefined) b['claimed-start'] = opts.startToken
  else delete b['claimed-start']
  b['claim-token'] = randomBytes(8).toString('hex')
}

function dropClaim(b: Bead, owner: boolean): void {
  for (const k of CLAIM_KEYS) delete b[k]
  if (owner) delete b.owner
}

/**
 * Give a claimed bead back to the queue inside a mutation (mutates `b`): open,
 * no owner, no claim keys, `updated_at` now. Orphan recovery and `helix stop`
 * release claims this one way (`unclaimBead` shares `dropClaim`).
 */
export function releaseClaim(b: Bead, now?: Date): void {
  b.status = 'open'
  dropClaim(b, true)
  b.updated_at = isoNow(now)
}

export async function claimBead(paths: ProjectPaths, id: string, opts: ClaimOptions): Promise<Bead> {
  const now = opts.now ?? new Date()
  return mutateTracker(paths, async (snap) => {
    const b = getBead(snap, id)
    await applyClaim(snap, b, opts, now)
    b.updated_at = isoNow(now)
    return {beads: snap.beads, result: b}
  })
}

export interface UnclaimResult {
  bead: Bead
  /** true when the bead was closed and left alone */
  closed: boolean
  changed: boolean
}

export async function unclaimBead(paths: ProjectPaths, id: string, opts: {now?: Date} = {}): Promise<UnclaimResult> {
  return mutateTracker<UnclaimResult>(paths, (snap) => {
    const b = getBead(snap, id)
    const s = statusOf(b)
    if (s === 'closed') return {beads: null, result: {bead: b, closed: true, changed: false}}
    const hadClaim = CLAIM_KEYS.some((k) => k in b) || (s === 'in_progress' && 'owner' in b)
    if (s !== 'in_progress' && !hadClaim) return {beads: null, result: {bead: b, closed: false, changed: false}}
    if (s === 'in_progress') b.status = 'open'
    dropClaim(b, true)
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: {bead: b, closed: false, changed: true}}
  })
}

/** The message the command prints when unclaim meets a closed bead. */
export function closedUnclaimMessage(id: string): string {
  return `${id} is closed; leaving it closed`
}

// ------------------------------------------------------------ close/reopen

export interface CloseOptions extends Fence {
  now?: Date
}

/** The caller's claim (HELIX_CLAIM_TOKEN / HELIX_BEAD_ID from the agent's environment). */
export interface Fence {
  claimToken?: string
  targetId?: string
}

/** The fence of an agent's process environment. */
export function fenceFromEnv(env: NodeJS.ProcessEnv = process.env): Fence {
  return {claimToken: env.HELIX_CLAIM_TOKEN, targetId: env.HELIX_BEAD_ID}
}

export function claimLostMessage(id: string): string {
  return `claim on ${id} was lost (token mismatch); not changing it`
}

/**
 * SPEC 13.3 fence, for every write an agent can make to a bead: with a claim
 * token set, refuse (exit 3) when the bead carries a different `claim-token`,
 * or when it is the agent's own bead (HELIX_BEAD_ID) and its claim was
 * released (no `claim-token`). Other beads are not fenced.
 */
export function checkFence(b: Bead, f: Fence | undefined): void {
  const token = f?.claimToken
  if (token === undefined || token === '') return
  const raw = b['claim-token']
  const has = typeof raw === 'string' && raw !== '' ? raw : typeof raw === 'number' ? String(raw) : undefined
  const lost = has !== undefined ? has !== token : f?.targetId !== undefined && f.targetId !== '' && f.targetId === b.id
  if (lost) throw new ClaimConflictError(claimLostMessage(b.id))
}

export async function closeBead(paths: ProjectPaths, id: string, opts: CloseOptions = {}): Promise<Bead> {
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    if (statusOf(b) === 'closed') return {beads: null, result: b}
    checkFence(b, opts)
    const waiting = openDeps(snap, b)
    if (waiting.length) throw new HelixError(`cannot close ${id}: dependencies not closed: ${waiting.join(', ')}`, EXIT.ERROR)
    b.status = 'closed'
    dropClaim(b, false)
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: b}
  })
}

function appendText(existing: unknown, text: string): string {
  const cur = typeof existing === 'string' ? existing : ''
  return cur.trim() === '' ? text : `${cur.replace(/\s+$/, '')}\n\n${text}`
}

export async function reopenBead(paths: ProjectPaths, id: string, reason?: string, opts: {now?: Date} & Fence = {}): Promise<Bead> {
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    checkFence(b, opts)
    const s = statusOf(b)
    if (s !== 'closed' && s !== 'in_progress' && s !== 'blocked') {
      throw new HelixError(`cannot reopen ${id}: it is ${s} (only closed, in_progress or blocked beads reopen)`, EXIT.ERROR)
    }
    b.status = 'open'
    dropClaim(b, s === 'in_progress')
    if (reason !== undefined && reason.trim() !== '') b.notes = appendText(b.notes, reason)
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: b}
  })
}

// ------------------------------------------------------------------ update

export interface UpdateChanges {
  title?: string
  status?: string
  priority?: number | string
  labels?: string[] | string
  addLabels?: string[]
  removeLabels?: string[]
  parent?: string
  description?: string
  acceptance?: string
  notes?: string
  appendNotes?: string
  specId?: string
  design?: string
  executionEligible?: boolean | string
  supersededBy?: string
  replaces?: string
  assignee?: string
  set?: Record<string, string>
  unset?: string[]
  claim?: ClaimOptions
  unclaim?: boolean
  /** the caller's HELIX_CLAIM_TOKEN / HELIX_BEAD_ID: `--status closed` is fenced like close */
  claimToken?: string
  targetId?: string
  now?: Date
}

function hasChanges(c: UpdateChanges): boolean {
  return Object.entries(c).some(([k, v]) => {
    if (k === 'now' || k === 'claimToken' || k === 'targetId' || v === undefined || v === false) return false
    if (Array.isArray(v)) return v.length > 0
    if (k === 'set') return Object.keys(v as object).length > 0
    return true
  })
}

export interface UpdateResult {
  bead: Bead
  /** set when nothing was written for a reason that is not an error (e.g. `--unclaim` of a closed bead) */
  notice?: string
}

export async function updateBead(paths: ProjectPaths, id: string, changes: UpdateChanges): Promise<Bead> {
  return (await updateBeadDetailed(paths, id, changes)).bead
}

export async function updateBeadDetailed(paths: ProjectPaths, id: string, changes: UpdateChanges): Promise<UpdateResult> {
  if (!hasChanges(changes)) throw new HelixError('nothing to update', EXIT.ERROR)
  if (changes.claim && changes.unclaim) throw new HelixError('--claim and --unclaim cannot be combined', EXIT.ERROR)
  // Validate everything that needs no tracker before taking the lock.
  const c = changes
  if (c.title !== undefined) requireTitle(c.title)
  if (c.status !== undefined) parseStatus(c.status)
  const priority = c.priority === undefined ? undefined : parsePriority(c.priority)
  const ee = c.executionEligible === undefined ? undefined : parseBool('execution-eligible', c.executionEligible)
  if (c.set && 'status' in c.set) throw new HelixError('use --status (or --claim/--unclaim) to change status', EXIT.ERROR)
  const setVals = Object.entries(c.set ?? {}).map(([k, v]) => [k, coerceSetValue(k, v)] as const)
  for (const k of c.unset ?? []) {
    if (k === 'id' || k === 'title') throw new HelixError(`cannot unset ${k}`, EXIT.ERROR)
    if (k === 'status') throw new HelixError("cannot unset status (use --status)", EXIT.ERROR)
  }
  const now = c.now ?? c.claim?.now ?? new Date()
  await beadProblems({id: 'warm-up'}) // load zod before taking the lock

  return mutateTracker<UpdateResult>(paths, async (snap) => {
    const b = getBead(snap, id)
    checkFence(b, c)
    if (c.parent !== undefined && c.parent !== '') {
      if (c.parent === id) throw new HelixError(`${id} cannot be its own parent`, EXIT.ERROR)
      if (!snap.byId.has(c.parent)) throw new HelixError(`unknown parent '${c.parent}'`, EXIT.ERROR)
    }
    if (c.claim) await applyClaim(snap, b, {...c.claim, owner: c.assignee ?? c.claim.owner}, now)
    if (c.unclaim) {
      const s = statusOf(b)
      // not an error: the bead stays closed and nothing is written (exit 0)
      if (s === 'closed') return {beads: null, result: {bead: b, notice: closedUnclaimMessage(id)}}
      if (s === 'in_progress') b.status = 'open'
      dropClaim(b, true)
    }
    if (c.title !== undefined) b.title = c.title
    if (c.status !== undefined && c.status !== statusOf(b)) {
      // `--status` is another door to the same transitions: closing obeys the
      // close rules (token fence, open dependencies, claim keys removed), and
      // leaving in_progress drops the claim so no claim fields linger.
      if (c.status === 'closed') {
        const waiting = openDeps(snap, b)
        if (waiting.length) throw new HelixError(`cannot close ${id}: dependencies not closed: ${waiting.join(', ')}`, EXIT.ERROR)
      }
      if (c.status !== 'in_progress') dropClaim(b, false)
      b.status = c.status
    }
    if (priority !== undefined) b.priority = priority
    if (c.labels !== undefined) b.labels = splitList(c.labels)
    for (const l of c.addLabels ?? []) for (const x of splitList(l)) addLabelTo(b, x)
    for (const l of c.removeLabels ?? []) for (const x of splitList(l)) if (Array.isArray(b.labels)) b.labels = b.labels.filter((y) => y !== x)
    // the free-text fields of the field table (parent, description, notes, spec-id, …)
    for (const f of verbatimFields('update')) {
      const v = (c as unknown as Record<string, unknown>)[f.prop!]
      if (typeof v === 'string') b[f.key] = v
    }
    if (c.appendNotes !== undefined && c.appendNotes !== '') b.notes = appendText(b.notes, c.appendNotes)
    if (ee !== undefined) b['execution-eligible'] = ee
    if (c.assignee !== undefined && !c.claim) b.owner = c.assignee
    for (const [k, v] of setVals) b[k] = v
    for (const k of c.unset ?? []) delete b[k]
    b.updated_at = isoNow(now)
    const problems = await beadProblems(b)
    if (problems.length) throw new HelixError(`invalid bead after update: ${problems[0]}`, EXIT.ERROR)
    return {beads: snap.beads, result: {bead: b}}
  })
}

function addLabelTo(b: Bead, label: string): boolean {
  const labels = Array.isArray(b.labels) ? b.labels : []
  if (labels.includes(label)) return false
  b.labels = [...labels, label]
  return true
}

// --------------------------------------------------------------------- deps

/** Path from `from` to `to` following dependencies, or null. */
function depPath(snap: TrackerSnapshot, from: string, to: string): string[] | null {
  const prev = new Map<string, string | null>([[from, null]])
  const queue = [from]
  while (queue.length) {
    const cur = queue.shift()!
    if (cur === to) {
      const out: string[] = []
      for (let x: string | null = cur; x !== null; x = prev.get(x) ?? null) out.unshift(x)
      return out
    }
    const b = snap.byId.get(cur)
    if (!b) continue
    for (const d of depIds(b)) {
      if (!prev.has(d)) {
        prev.set(d, cur)
        queue.push(d)
      }
    }
  }
  return null
}

export async function depAdd(paths: ProjectPaths, id: string, dependsOn: string, opts: {now?: Date; type?: string} & Fence = {}): Promise<{changed: boolean}> {
  if (id === dependsOn) throw new HelixError(`${id} cannot depend on itself`, EXIT.ERROR)
  return mutateTracker<{changed: boolean}>(paths, (snap) => {
    const b = getBead(snap, id)
    checkFence(b, opts)
    if (!snap.byId.has(dependsOn)) throw notFound(dependsOn)
    if (depIds(b).includes(dependsOn)) return {beads: null, result: {changed: false}}
    const cycle = depPath(snap, dependsOn, id)
    if (cycle) throw new HelixError(`dependency cycle: ${[id, ...cycle].join(' -> ')}`, EXIT.ERROR)
    const now = isoNow(opts.now)
    const dep: Dependency = {issue_id: id, depends_on_id: dependsOn, type: opts.type ?? 'blocks', created_at: now}
    b.dependencies = [...(Array.isArray(b.dependencies) ? b.dependencies : []), dep]
    b.updated_at = now
    return {beads: snap.beads, result: {changed: true}}
  })
}

export async function depRemove(paths: ProjectPaths, id: string, dependsOn: string, opts: {now?: Date} & Fence = {}): Promise<{changed: boolean}> {
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    checkFence(b, opts)
    if (!depIds(b).includes(dependsOn)) throw new HelixError(`${id} does not depend on ${dependsOn}`, EXIT.ERROR)
    b.dependencies = (b.dependencies ?? []).filter((d) => !(d && d.depends_on_id === dependsOn))
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: {changed: true}}
  })
}

// ------------------------------------------------------- loop helpers

/** Append `text` to notes (blank-line separated). `once`: skip when notes already contain it. Returns whether it wrote. */
export async function appendNote(paths: ProjectPaths, id: string, text: string, opts: {once?: boolean; now?: Date} = {}): Promise<boolean> {
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    if (opts.once && typeof b.notes === 'string' && b.notes.includes(text)) return {beads: null, result: false}
    b.notes = appendText(b.notes, text)
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: true}
  })
}

/** Add a label (other labels kept). Returns whether it wrote. */
export async function addLabel(paths: ProjectPaths, id: string, label: string, opts: {now?: Date} = {}): Promise<boolean> {
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    if (!addLabelTo(b, label)) return {beads: null, result: false}
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: true}
  })
}

/** Set raw fields (already typed); `undefined` deletes a key. `id` cannot change. */
export async function setFields(paths: ProjectPaths, id: string, fields: Record<string, unknown>, opts: {now?: Date} = {}): Promise<Bead> {
  if ('id' in fields) throw new HelixError('cannot set id', EXIT.ERROR)
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) delete b[k]
      else b[k] = v
    }
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: b}
  })
}
