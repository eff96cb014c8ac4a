/**
 * Leftovers of `--workers` runs (SPEC 15.4): attempt worktrees under
 * `.helix/worktrees/` and preserved work on `refs/helix/preserved/*`. `helix
 * doctor` lists those no live run owns; `helix recover --worktrees` removes the
 * stale worktrees and never a preserved ref.
 *
 * Ownership: a run owns a worktree when its pid file names a live run and its
 * run-state `workers[]` names the worktree (or its branch). Because a run adds
 * a worktree a moment before it records it, while a run is live a worktree
 * younger than `FRESH_MS` also counts as owned. A preserved ref is owned while
 * a live run has a worker on its bead (the retry is reading it).
 */
import {existsSync, readdirSync, realpathSync, statSync} from 'node:fs'
import {rm} from 'node:fs/promises'
import path from 'node:path'
import type {ProjectPaths} from '../util/root.js'
import {readPidFile, runHolderAlive} from '../state/pidfile.js'
import {readRunState} from '../state/run-state.js'
import {sanitize} from '../util/sanitize.js'
import {firstLine, git, gitEnv, type GitResult} from '../git/run.js'
import {touchesTracker} from '../git/names.js'
import {parseAttemptName} from '../git/leftovers.js'
import {listWorktrees} from '../git/checked-out.js'
import {readAttemptMeta, removeAttemptMeta} from '../git/attempt-meta.js'
import {readTracker} from '../tracker/store.js'
import {reopenBead} from '../tracker/ops.js'
import {statusOf} from '../tracker/queries.js'
import {errorMessage} from '../util/errors.js'

export const FRESH_MS = 60_000
const WT_DIR = '.helix/worktrees'

export interface HelixWorktree {
  /** absolute path */
  path: string
  /** `.helix/worktrees/<name>` */
  rel: string
  /** `helix/<id>-<n>` (null: detached, or not registered with git) */
  branch: string | null
  /** known to `git worktree list` */
  registered: boolean
}

export interface PreservedRef {
  ref: string
  bead: string
  attempt: string
}

export interface Leftovers {
  /** false outside git: nothing to look at */
  git: boolean
  worktrees: HelixWorktree[]
  preserved: PreservedRef[]
}

async function inRoot(paths: Pick<ProjectPaths, 'root'>, env: NodeJS.ProcessEnv, args: string[]): Promise<GitResult> {
  return git(args, {cwd: paths.root, env: gitEnv(env)})
}

export async function listLeftovers(paths: Pick<ProjectPaths, 'root'>, env: NodeJS.ProcessEnv): Promise<Leftovers> {
  if ((await inRoot(paths, env, ['rev-parse', '--git-dir'])).code !== 0) return {git: false, worktrees: [], preserved: []}
  // git reports real paths; the root may be reached through a symlink
  const base = path.join(real(paths.root), WT_DIR)
  const byPath = new Map<string, HelixWorktree>()
  // a list that fails must not make registered worktrees look unregistered (they would be deleted, not removed)
  for (const w of await listWorktrees(paths.root, gitEnv(env))) {
    if (path.dirname(w.path) !== base) continue
    byPath.set(w.path, {path: w.path, rel: `${WT_DIR}/${path.basename(w.path)}`, branch: w.branch?.startsWith('refs/heads/') ? w.branch.slice('refs/heads/'.length) : null, registered: true})
  }
  if (existsSync(base)) {
    for (const name of readdirSync(base)) {
      const p = path.join(base, name)
      if (!byPath.has(p)) byPath.set(p, {path: p, rel: `${WT_DIR}/${name}`, branch: null, registered: false})
    }
  }
  return {git: true, worktrees: [...byPath.values()].sort((a, b) => a.rel.localeCompare(b.rel)), preserved: await listPreserved(paths, env)}
}

/**
 * The preserved refs alone (`refs/helix/preserved/<id>/<n>`): one for-each-ref, none outside
 * a repository. For callers that need no worktree list (a run's pruning at start).
 */
export async function listPreserved(paths: Pick<ProjectPaths, 'root'>, env: NodeJS.ProcessEnv): Promise<PreservedRef[]> {
  const r = await inRoot(paths, env, ['for-each-ref', '--format=%(refname)', 'refs/helix/preserved/'])
  if (r.code !== 0) return []
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((ref) => {
      const parts = ref.split('/')
      return {ref, bead: parts.slice(3, -1).join('/'), attempt: parts.at(-1) ?? ''}
    })
}

interface Owners {
  live: boolean
  paths: Set<string>
  branches: Set<string>
  beads: Set<string>
}

export async function liveOwners(paths: Pick<ProjectPaths, 'root' | 'pidFile' | 'runState'>): Promise<Owners> {
  const owners: Owners = {live: false, paths: new Set(), branches: new Set(), beads: new Set()}
  const rec = readPidFile(paths.pidFile)
  if (!rec || !runHolderAlive(rec)) return owners
  owners.live = true
  const state = await readRunState(paths.runState)
  for (const w of Array.isArray(state?.workers) ? state.workers : []) {
    if (typeof w?.worktree === 'string') owners.paths.add(real(path.resolve(paths.root, w.worktree)))
    if (typeof w?.branch === 'string') owners.branches.add(w.branch)
    if (typeof w?.bead === 'string') owners.beads.add(w.bead)
  }
  return owners
}

function real(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    // the path is gone: compare it as given
    return p
  }
}

function young(p: string, now: number): boolean {
  try {
    return now - statSync(p).ctimeMs < FRESH_MS
  } catch {
    // gone: nothing young to protect
    return false
  }
}

/** the worktrees and preserved refs no live run owns */
export async function unowned(paths: Pick<ProjectPaths, 'root' | 'pidFile' | 'runState'>, env: NodeJS.ProcessEnv, now = Date.now()): Promise<Leftovers> {
  const all = await listLeftovers(paths, env)
  if (!all.git) return all
  const o = await liveOwners(paths)
  // a worker may record the worktree or the agent's cwd inside it (a project in a repository subdirectory)
  const named = (w: HelixWorktree): boolean => [...o.paths].some((p) => p === w.path || p.startsWith(`${w.path}/`))
  const owned = (w: HelixWorktree): boolean => o.live && (named(w) || (w.branch !== null && o.branches.has(w.branch)) || young(w.path, now))
  return {git: true, worktrees: all.worktrees.filter((w) => !owned(w)), preserved: all.preserved.filter((p) => !(o.live && o.beads.has(p.bead)))}
}

function few(items: string[], n = 3): string {
  return items.slice(0, n).map((s) => sanitize(s)).join(', ') + (items.length > n ? ', …' : '')
}

/** `helix doctor` lines (SPEC 15.4): none outside git */
export async function worktreeChecks(
  paths: Pick<ProjectPaths, 'root' | 'pidFile' | 'runState'> & Partial<ProjectPaths>,
  env: NodeJS.ProcessEnv,
  now = Date.now(),
): Promise<Array<{level: 'ok' | 'warn' | 'fail'; what: string; detail: string; fix?: string}>> {
  const u = await unowned(paths, env, now)
  if (!u.git) return []
  const out: Array<{level: 'ok' | 'warn' | 'fail'; what: string; detail: string; fix?: string}> = []
  // SPEC 20.2: a --remote run's attempts are that run's to finish or keep at its start, and
  // `recover --worktrees` leaves them to it: each has its own 'leftover attempt' line with that advice
  const remoteOf = async (w: HelixWorktree): Promise<unknown> => {
    const parsed = parseAttemptName(path.basename(w.path))
    return parsed ? (await readAttemptMeta(paths.root, parsed.bead, parsed.attempt))?.remote : undefined
  }
  const stale: HelixWorktree[] = []
  let ofRemote = 0
  for (const w of u.worktrees) {
    if (typeof (await remoteOf(w)) === 'string') ofRemote++
    else stale.push(w)
  }
  if (stale.length)
    out.push({
      level: 'fail',
      what: 'worktrees',
      detail: `${stale.length} stale worktree(s) no run owns: ${few(stale.map((w) => w.rel))}`,
      fix: "run 'helix recover --worktrees' (their work, committed or not, is kept on refs/helix/preserved/ first)",
    })
  else if (ofRemote === 0) out.push({level: 'ok', what: 'worktrees', detail: 'no stale worktrees'})
  // refs of beads that landed since are not a problem (doctor says how to prune them); those of open beads are work to reuse
  const snap = paths.file && existsSync(paths.file) ? await readTracker(paths.file).catch(() => null) : null
  const open = u.preserved.filter((p) => {
    const b = snap?.byId.get(p.bead)
    return !b || statusOf(b) !== 'closed'
  })
  if (open.length)
    out.push({
      level: 'warn',
      what: 'preserved work',
      detail: `${open.length} ref(s) under refs/helix/preserved/ of beads not closed, no run owns: ${few(open.map((p) => p.ref))}`,
      fix: "inspect with 'git log -p <ref>'; the bead's next attempt is told about it",
    })
  return out
}

/**
 * `helix recover --worktrees`: for each stale worktree, commit its uncommitted
 * work (with the repository's hooks; a refusing hook gets a `commit-tree`
 * archive instead), keep its HEAD, detached or not, and its branch's tip on
 * `refs/helix/preserved/<id>/<n>` unless merged into the root's HEAD or already
 * preserved (SPEC 18.3a: no commit becomes unreachable), reopen a closed bead
 * whose work is thereby off the base (SPEC 18.1a), then remove the worktree and
 * the branch. Preserved refs are never deleted here.
 */
export async function recoverWorktrees(
  paths: Pick<ProjectPaths, 'root' | 'pidFile' | 'runState'> & Partial<ProjectPaths>,
  opts: {env: NodeJS.ProcessEnv; dryRun: boolean; say: (line: string) => void; now?: number; quietWhenNone?: boolean},
): Promise<{removed: string[]; keptBranches: string[]}> {
  const u = await unowned(paths, opts.env, opts.now)
  const res = {removed: [] as string[], keptBranches: [] as string[]}
  if (!u.git) {
    if (!opts.quietWhenNone) opts.say('helix: not a git repository; no worktrees to recover')
    return res
  }
  // plain `helix recover` (quietWhenNone) says nothing about worktrees when there are none
  if (opts.quietWhenNone && u.worktrees.length === 0) return res
  const named = (await inRoot(paths, opts.env, ['config', 'user.email'])).code === 0 && (await inRoot(paths, opts.env, ['config', 'user.name'])).code === 0
  const env = gitEnv(opts.env, named ? null : {name: 'helix', email: 'helix@localhost'})
  const run = (args: string[], cwd = paths.root): Promise<GitResult> => git(args, {cwd, env})
  const tip = async (rev: string, cwd = paths.root): Promise<string | null> => {
    const r = await run(['rev-parse', '--verify', '-q', `${rev}^{commit}`], cwd)
    return r.code === 0 ? r.stdout.trim() : null
  }
  const ancestor = async (a: string, b: string): Promise<boolean> => (await run(['merge-base', '--is-ancestor', a, b])).code === 0
  const snap = paths.file && existsSync(paths.file) ? await readTracker(paths.file).catch(() => null) : null
  for (const w of u.worktrees) {
    const parsed = parseAttemptName(path.basename(w.path))
    // a detached worktree still has its attempt branch (not checked out anywhere now)
    const own = parsed && !w.branch && (await tip(`refs/heads/helix/${path.basename(w.path)}`)) ? `helix/${path.basename(w.path)}` : null
    const branch = w.branch?.startsWith('helix/') ? w.branch : own
    const label = parsed ?? {bead: path.basename(w.path), attempt: 0}
    // SPEC 20.2: a --remote run's attempt is judged against its remote (its claim, its queue),
    // never against this checkout's tracker: it is left for that run's start
    const remote = parsed ? (await readAttemptMeta(paths.root, parsed.bead, parsed.attempt))?.remote : undefined
    if (typeof remote === 'string') {
      opts.say(`helix: kept worktree ${sanitize(w.rel)}: it belongs to 'helix run --remote ${sanitize(remote)}', which lands or preserves it at start as ${sanitize(remote)} says (its claim, its queue)`)
      if (branch) res.keptBranches.push(branch)
      continue
    }
    // uncommitted work (never the worktree's tracker copy) is committed first
    const pending = w.registered && existsSync(w.path) ? (await run(['status', '--porcelain', '-z', '--untracked-files=all'], w.path)).stdout.split('\0').filter((l) => l.length > 3 && !touchesTracker(l.slice(3))) : []
    const dirty = pending.length > 0
    let archive: string | null = null
    if (dirty && !opts.dryRun) {
      const add = await run(['add', '-A'], w.path)
      const staged = (await run(['diff', '--cached', '--name-only', '-z', '--no-renames'], w.path)).stdout.split('\0').filter(Boolean)
      const tracker = staged.filter(touchesTracker)
      if (tracker.length) await run(['restore', '--staged', '--', ...tracker], w.path)
      const msg = `helix: uncommitted work of ${label.bead} attempt ${label.attempt || '?'}`
      let c = add.code === 0 ? await run(['commit', '-q', '-m', msg], w.path) : add
      if (c.code !== 0 && add.code === 0) {
        // a hook refused: the work goes onto the preserved ref only, written with plumbing
        const tree = await run(['write-tree'], w.path)
        const head = await tip('HEAD', w.path)
        const ct = tree.code === 0 && head ? await run(['commit-tree', tree.stdout.trim(), '-p', head, '-m', msg], w.path) : tree
        if (ct.code === 0) archive = ct.stdout.trim()
        else c = ct
      }
      if (c.code !== 0 && !archive) {
        // its uncommitted work exists nowhere else: never remove it
        opts.say(`helix: kept worktree ${sanitize(w.rel)}: could not commit its uncommitted work (${sanitize(firstLine(c))})`)
        if (branch) res.keptBranches.push(branch)
        continue
      }
    }
    const tips = new Set<string>()
    const head = archive ?? (w.registered && existsSync(w.path) ? await tip('HEAD', w.path) : null)
    if (head) tips.add(head)
    const bt = branch ? await tip(`refs/heads/${branch}`) : null
    if (bt) tips.add(bt)
    const kept: string[] = []
    let merged = true
    let unkept = false
    for (const t of tips) {
      if (await ancestor(t, 'HEAD')) continue
      merged = false
      let have: string | null = null
      for (const p of (await listLeftovers(paths, opts.env)).preserved) if (await ancestor(t, p.ref)) have = p.ref
      if (have) {
        kept.push(have)
        continue
      }
      if (opts.dryRun) {
        kept.push(`refs/helix/preserved/${label.bead}/…`)
        continue
      }
      const ref = await keepOnPreservedRef(run, label.bead, Math.max(1, label.attempt), t)
      if (ref) kept.push(ref)
      else {
        opts.say(`helix: kept worktree ${sanitize(w.rel)}: could not write a preserved ref for its work`)
        unkept = true
        break
      }
    }
    if (unkept) {
      if (branch) res.keptBranches.push(branch)
      continue
    }
    if (dirty && opts.dryRun && merged) {
      merged = false
      kept.push(`refs/helix/preserved/${label.bead}/…`)
    }
    const verdict = branch ? `; branch ${branch} ${opts.dryRun ? 'would be deleted' : 'deleted'} (${merged ? 'merged' : `work kept at ${kept.join(', ')}`})` : !merged ? `; work kept at ${kept.join(', ')}` : ''
    // a closed bead whose work is now only on a preserved ref is reopened (SPEC 18.1a)
    const bead = parsed && snap ? snap.byId.get(parsed.bead) : undefined
    const reopen = !merged && bead !== undefined && statusOf(bead) === 'closed' && paths.file !== undefined
    if (opts.dryRun) {
      opts.say(`helix: would remove worktree ${sanitize(w.rel)}${sanitize(verdict)}${reopen ? `; ${sanitize(label.bead)} would be reopened` : ''}`)
      res.removed.push(w.rel)
      continue
    }
    if (reopen && parsed) {
      try {
        await reopenBead(paths as ProjectPaths, parsed.bead, `NOT LANDED [${new Date().toISOString()}]: left by a run that ended, removed by helix recover; work kept at ${kept.join(', ')}`)
      } catch (error) {
        opts.say(`helix: kept worktree ${sanitize(w.rel)}: could not reopen ${sanitize(parsed.bead)} (${sanitize(errorMessage(error))})`)
        continue
      }
    }
    if (w.registered) {
      const r = await run(['worktree', 'remove', '--force', '--force', w.path])
      if (r.code !== 0 && existsSync(w.path)) opts.say(`helix: git worktree remove ${sanitize(w.rel)}: ${sanitize(firstLine(r))}; deleting the directory`)
    }
    await rm(w.path, {recursive: true, force: true})
    await run(['worktree', 'prune'])
    if (branch) {
      const t = await tip(`refs/heads/${branch}`)
      if (t) await run(['update-ref', '-d', `refs/heads/${branch}`, t])
    }
    if (parsed) await removeAttemptMeta(paths.root, parsed.bead, parsed.attempt)
    opts.say(`helix: removed worktree ${sanitize(w.rel)}${sanitize(verdict)}${reopen ? `; reopened ${sanitize(label.bead)}` : ''}`)
    res.removed.push(w.rel)
  }
  if (u.worktrees.length === 0) opts.say('helix: no stale worktrees')
  const all = (await listLeftovers(paths, opts.env)).preserved.length
  if (all > 0) opts.say(`helix: ${all} preserved ref(s) kept under refs/helix/preserved/ (never removed here; inspect with 'git log -p <ref>')`)
  return res
}

/** create-only `refs/helix/preserved/<bead>/<n>` at the first free n from `from`; null when the write fails (not "taken") */
export async function keepOnPreservedRef(run: (args: string[]) => Promise<GitResult>, bead: string, from: number, sha: string): Promise<string | null> {
  for (let n = from; n < from + 100; n++) {
    const ref = `refs/helix/preserved/${bead}/${n}`
    const have = await run(['rev-parse', '--verify', '-q', ref])
    if (have.code === 0 && have.stdout.trim() === sha) return ref
    if ((await run(['update-ref', ref, sha, ''])).code === 0) return ref
    if ((await run(['rev-parse', '--verify', '-q', ref])).code !== 0) return null
  }
  return null
}
