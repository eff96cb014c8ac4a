/**
 * The bead lifecycle (SPEC 2.3, 2.5; split out of ops.ts): create (with the
 * validate-bead-create hook), close, reopen and update.
 */
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {HelixError, EXIT} from '../util/errors.js'
import type {ProjectPaths} from '../util/root.js'
import type {Bead, TrackerSnapshot} from './types.js'
import {mutateTracker, readTracker} from './store.js'
import {serializeBead} from './codec.js'
import {openDeps, statusOf} from './queries.js'
import {beadProblems} from './schema.js'
import {isExecutableFile} from '../util/files.js'
import {verbatimFields} from './fields.js'
import {addLabelTo, appendText, getBead, isoNow} from './bead-edit.js'
import {coerceSetValue, parseBool, parsePriority, parseStatus, requireTitle, splitList} from './parse-input.js'
import {idPrefix, newId} from './ids.js'
import type {ClaimOptions, Fence} from './claims.js'
import {applyClaim, checkFence, closedUnclaimMessage, dropClaim} from './claims.js'

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
  const problems = beadProblems(bead)
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

// ------------------------------------------------------------ close/reopen

export interface CloseOptions extends Fence {
  now?: Date
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

export async function reopenBead(paths: ProjectPaths, id: string, reason?: string, opts: {now?: Date; lockWaitSec?: number} & Fence = {}): Promise<Bead> {
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
  }, opts.lockWaitSec === undefined ? {} : {timeoutSec: opts.lockWaitSec})
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
    const problems = beadProblems(b)
    if (problems.length) throw new HelixError(`invalid bead after update: ${problems[0]}`, EXIT.ERROR)
    return {beads: snap.beads, result: {bead: b}}
  })
}

