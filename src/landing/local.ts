/**
 * The real `LoopLanding` (SPEC 15.1–15.2): one git worktree per attempt, landed
 * on the base branch by fast-forward only. git runs without a shell; helix never
 * runs `checkout`, `reset`, `push` or a forced ref update, and the project root's
 * uncommitted changes are left to git's own `merge --ff-only` refusal.
 */
import {existsSync} from 'node:fs'
import {mkdir, rm} from 'node:fs/promises'
import path from 'node:path'
import type {LandOptions, LandResult, LoopLanding, PreserveOptions, Workspace} from '../loop/ports.js'
import {firstLine, type GitResult} from '../git/run.js'
import type {Repo} from '../git/repo.js'
import {assertAttempt, assertSafeId, branchName, preservedRefName, touchesTracker, worktreeRel} from '../git/names.js'
import {createLandLock} from '../git/land-lock.js'
import {readAttemptMeta, removeAttemptMeta, writeAttemptMeta} from '../git/attempt-meta.js'
import {checkedOutAt as checkedOut} from '../git/checked-out.js'
import {factsIn, type CheckoutFacts} from '../git/where.js'
import {scanAttempts, type LeftoverAttempt} from '../git/leftovers.js'
import {addPendingReopen, readPendingReopens, removePendingReopen} from '../state/pending-reopens.js'
import {ensureIgnored} from '../util/runtime-paths.js'
import {errorMessage, HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {createLandBase, refused, type Landed, type NeedsRepair, type Refused} from './land-base.js'
import {createPreserve} from './preserve-work.js'
import {NEEDS_BRANCH, openLandingRepo, type LandingRepo} from './landing-repo.js'
import type {LandCheckSpec} from './land-check.js'
import {createLandChecked, type CheckRefused} from './local-checked.js'
import {createRepairCheck} from './repair-check.js'

/** SPEC 20.3: rounds of "check outside the lock, the base moved, rebase" before the check runs under the lock */

export interface GitLandingOptions {
  /** the project root (may be a subdirectory of the repository) */
  root: string
  /** the tracker directory the run uses (`.ddx/` or DDX_BEAD_DIR); commits touching it are refused too */
  trackerDir: string
  env: NodeJS.ProcessEnv
  now: () => Date
  /** one-line warnings (a worktree that would not go away, …) */
  log?: (line: string) => void
  /** how long `land` waits for another helix process's land lock (default 120 s) */
  lockWaitMs?: number
  /** told how long each landing held the land lock, in ms (the bench's fixed-cost figure) */
  onLockHeld?: (ms: number) => void
  /** SPEC 20.3 `--land-check`: the team's check, run on every candidate before the base moves */
  landCheck?: Omit<LandCheckSpec, 'env'>
  /**
   * A landed attempt's worktree and branch are removed after `land` returns, so the slot
   * takes its next bead meanwhile; `settled()` waits for those removals (`helix run` does
   * before it ends). Off: `land` returns once they are gone.
   */
  cleanupInBackground?: boolean
  /**
   * What the run's start-up check already asked git about the root (top level, prefix,
   * common directory, checked-out branch): used once, in place of asking again. Facts
   * asked in another directory are ignored.
   */
  known?: CheckoutFacts | null
}

/**
 * `git worktree add` / `remove` errors that mean another git process was writing or
 * removing an entry under .git/worktrees/ (another slot's add or cleanup): worth a retry
 */
const ADMIN_RACE = /commondir|gitdir|\.git\/worktrees\//
const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

export function createGitLanding(opts: GitLandingOptions): LoopLanding {
  const root = path.resolve(opts.root)
  const log = opts.log ?? (() => {})
  let repo: LandingRepo | null = null
  let baseName: string | null = null
  let excluded = false
  let lock: ReturnType<typeof createLandLock> | null = null
  /** removals of landed attempts still running (cleanupInBackground) */
  const cleanups = new Set<Promise<void>>()

  const known = factsIn(opts.known, root)
  /** the start-up check's branch, taken by the first base() only */
  let knownBranch = known?.branch ?? null
  const ctx = async (): Promise<LandingRepo> => (repo ??= await openLandingRepo(root, opts.trackerDir, opts.env, known))

  const typed = async (): Promise<Repo> => (await ctx()).git
  const run = async (args: string[], cwd: string): Promise<GitResult> => (await typed()).run(args, cwd)
  const revParse = async (rev: string, cwd = root): Promise<string | null> => (await typed()).commitOf(rev, cwd)
  const wtTop = (ws: {bead: string; attempt: number}): string => path.join(root, worktreeRel(ws.bead, ws.attempt))
  const trackerFile = (f: string): boolean => touchesTracker(f) || (repo?.trackerRel ? f === repo.trackerRel || f.startsWith(`${repo.trackerRel}/`) : false)

  // the root's HEAD already read on the base (for-each-ref's %(HEAD)): it is where the base is checked out
  const checkedOutAt = async (b: string, rootHead = false): Promise<string | null> => (rootHead ? (await ctx()).top : checkedOut(b, root, (await ctx()).top, (await ctx()).env))

  const {commitLeftovers, abortRebase, keepRef, keepBranchTip, preservedRef, listedPreserved} = createPreserve({git: typed, log, base, wtTop, trackerFile})

  async function base(): Promise<string> {
    if (baseName) return baseName
    await ctx()
    // the start-up check's branch is the base (read moments ago, and the base is read once per run anyway)
    const told = knownBranch
    knownBranch = null
    const r = told ? {code: 0, stdout: told} : await (await typed()).run(['symbolic-ref', '-q', '--short', 'HEAD'])
    if (r.code !== 0) throw new HelixError(`${NEEDS_BRANCH} (HEAD is detached in ${sanitize(root)}); run 'git switch <branch>' there, or use --workers 1`, EXIT.ERROR)
    const name = r.stdout.trim()
    if (name === 'helix' || name.startsWith('helix/'))
      throw new HelixError(`helix run: the base branch '${sanitize(name)}' collides with helix's attempt branches helix/<id>-<n>; switch the project root to another branch, or use --workers 1`, EXIT.ERROR)
    if (!(await revParse(`refs/heads/${name}`))) throw new HelixError(`${NEEDS_BRANCH} (branch ${sanitize(name)} has no commits yet); commit once, or use --workers 1`, EXIT.ERROR)
    baseName = name
    return name
  }

  const baseTip = async (): Promise<string> => {
    const b = await base()
    const tip = await revParse(`refs/heads/${b}`)
    if (!tip) throw new HelixError(`helix: the base branch ${sanitize(b)} no longer exists`, EXIT.ERROR)
    return tip
  }

  async function ensureExcludes(): Promise<void> {
    const r = await ctx()
    const file = path.join(r.commonDir, 'info', 'exclude')
    await mkdir(path.dirname(file), {recursive: true})
    ensureIgnored(file)
    excluded = true
  }

  /**
   * An attempt number is free when no branch, worktree directory or preserved ref
   * uses it. One for-each-ref lists both namespaces (ids are SAFE_ID: no glob
   * characters) and the base branch, whose tip the attempt starts from.
   */
  async function takenBy(bead: string): Promise<{taken: (n: number) => boolean; tip: string}> {
    const b = await base()
    const preserved = `refs/helix/preserved/${bead}/`
    const listed = await (await typed()).forEachRef([`refs/heads/helix/${bead}-*`, preserved, `refs/heads/${b}`])
    const refs = new Set(listed.map((r) => r.ref))
    listedPreserved(bead, listed.filter((r) => r.ref.startsWith(preserved)).map((r) => r.ref))
    // the base as listed; a base that is gone (or not a commit) is asked again, for baseTip's own error
    const tip = listed.find((r) => r.ref === `refs/heads/${b}`)?.sha ?? (await baseTip())
    return {taken: (n) => existsSync(wtTop({bead, attempt: n})) || refs.has(`refs/heads/${branchName(bead, n)}`) || refs.has(preservedRefName(bead, n)), tip}
  }

  async function prepare(bead: string, attempt: number, slot: number, meta?: Record<string, unknown>): Promise<Workspace> {
    assertSafeId(bead)
    assertAttempt(attempt)
    const r = await ctx()
    if (!excluded) await ensureExcludes()
    let n = attempt
    const {taken, tip} = await takenBy(bead)
    while (taken(n)) n++
    const top = wtTop({bead, attempt: n})
    await mkdir(path.dirname(top), {recursive: true})
    const branch = branchName(bead, n)
    // written before the worktree exists, so a crash at any later moment finds the claim's fingerprint (SPEC 18.2)
    await writeAttemptMeta(root, {bead, attempt: n, branch, base_tip: tip, started_at: opts.now().toISOString(), ...(meta ?? {})})
    const ws: Workspace = {slot, bead, attempt: n, dir: path.resolve(top, r.prefix || '.'), branch, baseTip: tip}
    const g = await typed()
    let add = await g.worktreeAdd(top, {newBranch: branch, at: tip})
    if (add.code !== 0 && ADMIN_RACE.test(add.stderr)) {
      // another git process touched .git/worktrees/ while this one was being made:
      // clean up and try once more
      await removeWorktree(ws, true)
      await settle(50)
      const made = await revParse(`refs/heads/${branch}`)
      if (made) await g.deleteRef(`refs/heads/${branch}`, made)
      add = await g.worktreeAdd(top, {newBranch: branch, at: tip})
    }
    if (add.code !== 0) {
      // a failing post-checkout hook (or a full disk) fails this attempt only, and leaves nothing behind (SPEC 18.3a)
      await removeWorktree(ws)
      await deleteBranch(ws)
      throw new HelixError(`helix: git worktree add for ${bead} attempt ${n} failed: ${sanitize(firstLine(add))}`, EXIT.ERROR)
    }
    return ws
  }

  /** the attempt's work: the worktree's HEAD, or the branch once the worktree is gone */
  const workTip = async (ws: Workspace): Promise<string | null> => (existsSync(wtTop(ws)) ? await revParse('HEAD', wtTop(ws)) : null) ?? (await revParse(`refs/heads/${ws.branch}`))

  /**
   * `git worktree remove` deletes the directory and its entry under .git/worktrees/.
   * `worktree prune` is only for what it could not remove (and `prune` = true): a
   * routine prune races another slot's `worktree add`, whose half-made entry it may delete.
   */
  async function removeWorktree(ws: Workspace, prune = false): Promise<void> {
    const top = wtTop(ws)
    const g = await typed()
    if (existsSync(top)) {
      let r = await g.worktreeRemove(top)
      if (r.code !== 0 && ADMIN_RACE.test(r.stderr)) {
        await settle(50)
        r = await g.worktreeRemove(top)
      }
      if (r.code !== 0) {
        log(`helix: git worktree remove ${worktreeRel(ws.bead, ws.attempt)}: ${sanitize(firstLine(r))}; deleting the directory`)
        await rm(top, {recursive: true, force: true})
        prune = true
      }
    } else prune = true
    if (prune) await g.worktreePrune()
  }

  /** compare-and-delete of the attempt's branch at `at` (a landing knows its tip), else at the value just read */
  async function deleteBranch(ws: Workspace, at?: string): Promise<void> {
    const ref = `refs/heads/${ws.branch}`
    const g = await typed()
    if (at && (await g.deleteRef(ref, at))) {
      if (!existsSync(wtTop(ws))) await removeAttemptMeta(root, ws.bead, ws.attempt)
      return
    }
    const sha = await revParse(ref)
    if (sha) await g.deleteRef(ref, sha)
    if (!(await revParse(ref)) && !existsSync(wtTop(ws))) await removeAttemptMeta(root, ws.bead, ws.attempt)
  }

  async function preserve(ws: Workspace, reason: string, popts?: PreserveOptions): Promise<string | null> {
    const left = await commitLeftovers(ws)
    const leftovers = left.kind
    const tip = left.kind === 'refused' ? left.archive : await workTip(ws)
    // a resolve that dropped the attempt's commits: they are on the ref kept then, and the tip holds nothing of its own
    let ref: string | null = takeDropped(ws)
    const nothingMore = ref !== null && tip !== null && (await (await typed()).isAncestor(tip, `refs/heads/${await base()}`))
    if (!nothingMore && tip && tip !== ws.baseTip) {
      ref = await keepRef(ws, tip)
      if (!ref) {
        // never lose work: keep the branch when the ref cannot be written
        log(`helix: could not write ${preservedRefName(ws.bead, ws.attempt)}; work of ${ws.bead} stays on branch ${ws.branch} (${sanitize(reason)})`)
        if (leftovers !== 'failed') await removeWorktree(ws)
        return `refs/heads/${ws.branch}`
      }
    }
    if (leftovers === 'failed') {
      // its uncommitted work is only in the worktree: leave it for the operator (doctor lists it)
      log(`helix: kept worktree ${worktreeRel(ws.bead, ws.attempt)} and branch ${ws.branch}: it holds uncommitted work helix could not commit`)
      return ref
    }
    // the worktree and the branch are what a restart finds an attempt by: the reopen owed goes on record first
    await popts?.beforeRemove?.(ref, reason)
    await keepBranchTip(ws, tip)
    await removeWorktree(ws)
    await deleteBranch(ws)
    return ref
  }

  /** the Workspace of a leftover attempt (SPEC 18.2) */
  async function workspaceOf(l: LeftoverAttempt, slot: number): Promise<Workspace> {
    const r = await ctx()
    const top = wtTop(l)
    const b = await base()
    const fromMeta = typeof l.meta?.base_tip === 'string' && (await revParse(l.meta.base_tip)) ? l.meta.base_tip : null
    const mb = l.tip ? ((await (await typed()).mergeBase(l.tip, `refs/heads/${b}`)) ?? '') : ''
    return {slot, bead: l.bead, attempt: l.attempt, dir: path.resolve(top, r.prefix || '.'), branch: l.branch ?? branchName(l.bead, l.attempt), baseTip: fromMeta ?? (mb || (await baseTip()))}
  }

  async function leftovers(): Promise<LeftoverAttempt[]> {
    return scanAttempts(root, (await ctx()).env, await base())
  }

  /**
   * A leftover to finish: its worktree on its branch (re-added when only the
   * branch is left), a half-done rebase aborted. Null when it cannot be landed as
   * is (a detached HEAD); the caller preserves it then.
   */
  async function adopt(l: LeftoverAttempt, slot: number): Promise<Workspace | null> {
    const ws = await workspaceOf(l, slot)
    const top = wtTop(l)
    if (l.detached || !(await revParse(`refs/heads/${ws.branch}`))) return null
    if (!existsSync(top)) {
      await mkdir(path.dirname(top), {recursive: true})
      const g = await typed()
      await g.worktreePrune()
      const add = await g.worktreeAdd(top, {branch: ws.branch})
      if (add.code !== 0) {
        log(`helix: could not re-add the worktree of ${l.bead} attempt ${l.attempt}: ${sanitize(firstLine(add))}`)
        await removeWorktree(ws)
        return null
      }
    }
    await abortRebase(top)
    return ws
  }

  /** a leftover whose work is on the base already: worktree and branch go, nothing else changes */
  async function discard(l: LeftoverAttempt): Promise<void> {
    const ws = await workspaceOf(l, 0)
    await removeWorktree(ws)
    await deleteBranch(ws)
  }

  const {readyToLand, landLocked, rebaseOnto} = createLandBase({root, now: opts.now, git: typed, base, baseTip, wtTop, trackerFile, checkedOutAt, commitLeftovers, abortRebase})
  const {verifyRepair, handOver, takeDropped} = createRepairCheck({run, wtTop, commitLeftovers, keepRef})
  // SPEC 20.3: a candidate that lost 3 races is checked under the lock, so a waiting slot may wait a whole check
  const lockWait = opts.lockWaitMs ?? (opts.landCheck ? 120_000 + opts.landCheck.timeoutSec * 1000 : undefined)
  const {landChecked} = createLandChecked({root, env: opts.env, spec: () => opts.landCheck as Omit<LandCheckSpec, 'env'>, run, wtTop, base, baseTip, rebaseOnto, landLocked, underLandLock: (fn) => underLandLock(fn)})

  async function land(ws: Workspace, o: LandOptions = {}): Promise<LandResult> {
    let result: Landed | CheckRefused | NeedsRepair
    try {
      const ready = await readyToLand(ws, o.repair === true)
      if (!('onto' in ready)) result = ready
      else if (opts.landCheck) result = await landChecked(ws, ready.onto, o)
      else result = (await underLandLock(() => landLocked(ws, ready.onto, false, o.repair === true))) as Landed | Refused | NeedsRepair
    } catch (error) {
      result = refused(sanitize(errorMessage(error).replace(/^helix: /, '')))
    }
    // SPEC 20.4: the worktree stays as it is (a stopped rebase, or the check's log) for the resolve action
    if (!result.landed && 'repair' in result) {
      await handOver(ws, ws.branch)
      return result
    }
    if (result.landed) {
      takeDropped(ws)
      // The base already holds the commits (a fast-forward where the base is checked out
      // listed them as it verified the base), so listing them, removing the worktree and
      // deleting the branch need no lock: the next slot's landing does not wait for
      // them. A crash here leaves a landed attempt's worktree for
      // reconciliation (18.2) and `recover --worktrees`, exactly as a crash after the
      // cleanup's first step would.
      const commits = result.commits ?? (await run(['rev-list', '--reverse', `${result.from}..${result.sha}`], root)).stdout.split('\n').map((c) => c.trim()).filter(Boolean)
      const sha = result.sha
      const cleanup = (async () => {
        try {
          await removeWorktree(ws)
          await deleteBranch(ws, sha)
        } catch (error) {
          log(`helix: landed ${ws.bead}, but could not remove its worktree or branch: ${sanitize(errorMessage(error))}`)
        }
      })()
      if (opts.cleanupInBackground) {
        cleanups.add(cleanup)
        void cleanup.finally(() => cleanups.delete(cleanup))
      } else await cleanup
      return {landed: true, sha, commits}
    }
    return {landed: false, reason: result.reason, preservedRef: await preserve(ws, result.reason, o.beforeRemove ? {beforeRemove: o.beforeRemove} : undefined), ...(result.checkTail ? {checkTail: result.checkTail} : {})}
  }

  async function underLandLock<T>(fn: () => Promise<T>): Promise<T> {
    const release = await (lock ??= createLandLock(path.join((await ctx()).commonDir, 'helix-land.lock'), {waitMs: lockWait})).acquire()
    const t0 = performance.now()
    try {
      return await fn()
    } finally {
      await release()
      opts.onLockHeld?.(performance.now() - t0)
    }
  }

  async function keepBranch(ws: Workspace): Promise<string> {
    // the kept branch of --land none is not a leftover: reconciliation leaves it alone
    await writeAttemptMeta(root, {...((await readAttemptMeta(root, ws.bead, ws.attempt)) ?? {bead: ws.bead, attempt: ws.attempt, branch: ws.branch, base_tip: ws.baseTip}), kept: true})
    if ((await commitLeftovers(ws)).kind !== 'failed') await removeWorktree(ws)
    return ws.branch
  }

  return {
    base,
    ensureExcludes,
    prepare,
    land,
    verifyRepair,
    commitsOf: async (ws, onto) => (await run(['log', '--reverse', '--format=%h %s', `${onto}..refs/heads/${ws.branch}`], wtTop(ws))).stdout.split('\n').filter(Boolean).slice(0, 50),
    preserve,
    keepBranch,
    preservedRef,
    leftovers,
    adopt,
    discard,
    preserveLeftover: async (l) => preserve(await workspaceOf(l, 0), 'left by a run that ended'),
    settled: async () => {
      while (cleanups.size > 0) await Promise.all([...cleanups])
    },
    pending: {list: () => readPendingReopens(root), add: (p) => addPendingReopen(root, p), remove: (bead) => removePendingReopen(root, bead)},
  }
}
