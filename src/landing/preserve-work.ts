/**
 * Saving an attempt's work for `LoopLanding` (SPEC 15.2, 18.3a): the agent's
 * uncommitted changes committed (or archived when a hook refuses), and the
 * create-only preserved refs `refs/helix/preserved/<id>/<n>`. Split out of
 * local.ts (the 400-line rule); the git context is passed in.
 */
import {existsSync} from 'node:fs'
import type {Workspace} from '../loop/ports.js'
import {firstLine, type GitResult} from '../git/run.js'
import type {Repo} from '../git/repo.js'
import {idProblem, preservedRefName} from '../git/names.js'
import {sanitize} from '../util/sanitize.js'

/** what became of the agent's uncommitted changes */
export type Leftovers = {kind: 'none'} | {kind: 'committed'} | {kind: 'failed'} | {kind: 'refused'; why: string; archive: string; conflicts?: string[]}

/** git's arguments listing the paths a stopped merge, cherry-pick or revert left unmerged (NUL-separated) */
export const UNMERGED_PATHS = ['diff', '--name-only', '-z', '--diff-filter=U']

/** why the leftovers were not committed for landing: a hook's refusal, or conflicts the agent left unresolved */
export function refusedWords(left: {why: string; conflicts?: string[]}, what: string): string {
  if (left.conflicts) {
    const more = left.conflicts.length > 3 ? ` and ${left.conflicts.length - 3} more` : ''
    return `${what} hold unresolved conflicts (${sanitize(left.conflicts.slice(0, 3).join(', '))}${more}): a merge, cherry-pick or revert was left unfinished`
  }
  return `a hook refused the commit of ${what} (${sanitize(left.why)})`
}

/** what `abortRebase` found: whether it aborted a rebase, and HEAD's branch ref when it did not (one look answers both) */
export type RebaseLook = {aborted: boolean; head: string | null}

/** where a refused attempt's work is, for the line the run stops with (SPEC 20.1) */
export function keptWords(bead: string, ref: string | null): string {
  return ref ? `${sanitize(bead)}'s work is kept at ${sanitize(ref)}` : `${sanitize(bead)} changed nothing`
}

/** the newest of a bead's preserved refs `refs/helix/preserved/<id>/<n>` (the highest n), or null */
export function latestPreserved(refs: Iterable<string>): string | null {
  let best: {n: number; ref: string} | null = null
  for (const ref of refs) {
    const n = Number(ref.slice(ref.lastIndexOf('/') + 1))
    if (Number.isSafeInteger(n) && (!best || n > best.n)) best = {n, ref}
  }
  return best?.ref ?? null
}

export interface PreserveDeps {
  /** the typed git layer on the project root (its environment carries helix's identity when the repository has none) */
  git: () => Promise<Repo>
  log: (line: string) => void
  base: () => Promise<string>
  wtTop: (ws: {bead: string; attempt: number}) => string
  trackerFile: (f: string) => boolean
}

export function createPreserve(d: PreserveDeps) {
  const {log, base, wtTop, trackerFile} = d
  /** a bead's newest preserved ref as `prepare` just listed it, for the `preservedRef` the loop asks next (one for-each-ref less) */
  const listed = new Map<string, string | null>()

  /**
   * Commit what the agent left uncommitted (never tracker files) as one commit,
   * running the repository's hooks (SPEC 18.3a: no --no-verify). A hook that
   * refuses gives `refused`: the leftovers are then written with plumbing
   * (`commit-tree`, no hooks) as `archive`, for the preserved ref only.
   * `failed` (a stale index.lock of a killed git, a full disk…) means the worktree
   * still holds work that exists nowhere else, so it must not be removed.
   */
  async function commitLeftovers(ws: Workspace): Promise<Leftovers> {
    const top = wtTop(ws)
    if (!existsSync(top)) return {kind: 'none'}
    const fail = (r: GitResult): Leftovers => {
      log(`helix: could not commit the uncommitted work of ${ws.bead} attempt ${ws.attempt}: ${sanitize(firstLine(r))}`)
      return {kind: 'failed'}
    }
    await abortRebase(top)
    const g = await d.git()
    const conflicts = await g.names(UNMERGED_PATHS, top)
    const add = await g.run(['add', '-A'], top)
    if (add.code !== 0) return fail(add)
    const staged = await g.names(['diff', '--cached', '--name-only', '-z', '--no-renames'], top)
    const tracker = staged.filter(trackerFile)
    if (tracker.length) await g.run(['restore', '--staged', '--', ...tracker], top)
    if ((await g.run(['diff', '--cached', '--quiet'], top)).code === 0) return {kind: 'none'}
    const msg = `helix: uncommitted work of ${ws.bead} attempt ${ws.attempt}`
    const c = conflicts.length > 0 ? null : await g.run(['commit', '-q', '-m', msg], top)
    if (c && c.code === 0) return {kind: 'committed'}
    const tree = await g.run(['write-tree'], top)
    const head = await g.commitOf('HEAD', top)
    if (tree.code !== 0 || !head) return fail(c ?? tree)
    const archived = await g.run(['commit-tree', tree.stdout.trim(), '-p', head, '-m', msg], top)
    if (archived.code !== 0) return fail(archived)
    if (!c) return {kind: 'refused', why: 'unresolved conflicts', archive: archived.stdout.trim(), conflicts}
    return {kind: 'refused', why: firstLine(c), archive: archived.stdout.trim()}
  }

  /** a rebase a killed helix left half done: put the branch back where it was */
  async function abortRebase(top: string): Promise<RebaseLook> {
    const g = await d.git()
    const look = await g.rebaseState(top)
    if (!look.rebasing) return {aborted: false, head: look.head}
    await g.run(['rebase', '--abort'], top)
    return {aborted: true, head: null}
  }

  /** create-only (never overwrite) the preserved ref; the next free attempt number if another process took this one */
  async function keepRef(ws: Workspace, tip: string): Promise<string | null> {
    const g = await d.git()
    listed.delete(ws.bead)
    for (let n = ws.attempt; n < ws.attempt + 100; n++) {
      const ref = preservedRefName(ws.bead, n)
      if ((await g.commitOf(ref)) === tip) return ref
      const r = await g.run(['update-ref', '-m', `helix: preserved ${ws.bead} attempt ${ws.attempt}`, ref, tip, ''])
      if (r.code === 0) return ref
      // only a ref that exists is "number taken"; a failed write (ENOSPC, EACCES) is a failure, not a reason to try /63
      if ((await g.revParse(ref)) === null) {
        log(`helix: could not write ${ref}: ${sanitize(firstLine(r))}`)
        return null
      }
    }
    return null
  }

  /** a branch whose tip is not in the preserved work (its worktree's HEAD was detached and moved) gets a ref of its own */
  async function keepBranchTip(ws: Workspace, kept: string | null): Promise<void> {
    const g = await d.git()
    const bt = await g.commitOf(`refs/heads/${ws.branch}`)
    if (!bt || bt === kept || bt === ws.baseTip) return
    if (kept && (await g.isAncestor(bt, kept))) return
    if (await g.isAncestor(bt, `refs/heads/${await base()}`)) return
    await keepRef(ws, bt)
  }

  async function preservedRef(bead: string): Promise<string | null> {
    if (idProblem(bead)) return null
    const seen = listed.get(bead)
    listed.delete(bead)
    if (seen !== undefined) return seen
    return latestPreserved((await (await d.git()).forEachRef(`refs/helix/preserved/${bead}/`)).map((r) => r.ref))
  }

  /** what `prepare` listed under `refs/helix/preserved/<id>/`; the next `preservedRef(id)` answers from it, once */
  function listedPreserved(bead: string, refs: string[]): void {
    listed.set(bead, latestPreserved(refs))
  }

  return {commitLeftovers, abortRebase, keepRef, keepBranchTip, preservedRef, listedPreserved}
}
