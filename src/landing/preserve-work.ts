/**
 * Saving an attempt's work for `LoopLanding` (SPEC 15.2, 18.3a): the agent's
 * uncommitted changes committed (or archived when a hook refuses), and the
 * create-only preserved refs `refs/helix/preserved/<id>/<n>`. Split out of
 * local.ts (the 400-line rule); the git context is passed in.
 */
import {existsSync} from 'node:fs'
import path from 'node:path'
import type {Workspace} from '../loop/ports.js'
import {firstLine, type GitResult} from '../git/run.js'
import {idProblem, preservedRefName} from '../git/names.js'
import {sanitize} from '../util/sanitize.js'

/** what became of the agent's uncommitted changes */
export type Leftovers = {kind: 'none'} | {kind: 'committed'} | {kind: 'failed'} | {kind: 'refused'; why: string; archive: string}

export interface PreserveDeps {
  root: string
  log: (line: string) => void
  run: (args: string[], cwd: string) => Promise<GitResult>
  revParse: (rev: string, cwd?: string) => Promise<string | null>
  refExists: (ref: string) => Promise<boolean>
  base: () => Promise<string>
  wtTop: (ws: {bead: string; attempt: number}) => string
  trackerFile: (f: string) => boolean
}

export function createPreserve(d: PreserveDeps) {
  const {root, log, run, revParse, refExists, base, wtTop, trackerFile} = d
  const nul = (s: string): string[] => s.split('\0').filter(Boolean)

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
    const add = await run(['add', '-A'], top)
    if (add.code !== 0) return fail(add)
    const staged = nul((await run(['diff', '--cached', '--name-only', '-z', '--no-renames'], top)).stdout)
    const tracker = staged.filter(trackerFile)
    if (tracker.length) await run(['restore', '--staged', '--', ...tracker], top)
    if ((await run(['diff', '--cached', '--quiet'], top)).code === 0) return {kind: 'none'}
    const msg = `helix: uncommitted work of ${ws.bead} attempt ${ws.attempt}`
    const c = await run(['commit', '-q', '-m', msg], top)
    if (c.code === 0) return {kind: 'committed'}
    const tree = await run(['write-tree'], top)
    const head = await revParse('HEAD', top)
    if (tree.code !== 0 || !head) return fail(c)
    const archived = await run(['commit-tree', tree.stdout.trim(), '-p', head, '-m', msg], top)
    if (archived.code !== 0) return fail(archived)
    return {kind: 'refused', why: firstLine(c), archive: archived.stdout.trim()}
  }

  /** a rebase a killed helix left half done: put the branch back where it was */
  async function abortRebase(top: string): Promise<void> {
    const dirs = (await run(['rev-parse', '--git-path', 'rebase-merge', '--git-path', 'rebase-apply'], top)).stdout.split('\n').map((l) => l.trim())
    if (dirs.some((p) => p && existsSync(path.resolve(top, p)))) await run(['rebase', '--abort'], top)
  }

  /** create-only (never overwrite) the preserved ref; the next free attempt number if another process took this one */
  async function keepRef(ws: Workspace, tip: string): Promise<string | null> {
    for (let n = ws.attempt; n < ws.attempt + 100; n++) {
      const ref = preservedRefName(ws.bead, n)
      if ((await revParse(ref)) === tip) return ref
      const r = await run(['update-ref', '-m', `helix: preserved ${ws.bead} attempt ${ws.attempt}`, ref, tip, ''], root)
      if (r.code === 0) return ref
      // only a ref that exists is "number taken"; a failed write (ENOSPC, EACCES) is a failure, not a reason to try /63
      if (!(await refExists(ref))) {
        log(`helix: could not write ${ref}: ${sanitize(firstLine(r))}`)
        return null
      }
    }
    return null
  }

  /** a branch whose tip is not in the preserved work (its worktree's HEAD was detached and moved) gets a ref of its own */
  async function keepBranchTip(ws: Workspace, kept: string | null): Promise<void> {
    const bt = await revParse(`refs/heads/${ws.branch}`)
    if (!bt || bt === kept || bt === ws.baseTip) return
    if (kept && (await run(['merge-base', '--is-ancestor', bt, kept], root)).code === 0) return
    if ((await run(['merge-base', '--is-ancestor', bt, `refs/heads/${await base()}`], root)).code === 0) return
    await keepRef(ws, bt)
  }

  async function preservedRef(bead: string): Promise<string | null> {
    if (idProblem(bead)) return null
    const r = await run(['for-each-ref', '--format=%(refname)', `refs/helix/preserved/${bead}/`], root)
    let best: {n: number; ref: string} | null = null
    for (const ref of r.stdout.split('\n').map((l) => l.trim()).filter(Boolean)) {
      const n = Number(ref.slice(ref.lastIndexOf('/') + 1))
      if (Number.isSafeInteger(n) && (!best || n > best.n)) best = {n, ref}
    }
    return best?.ref ?? null
  }

  return {commitLeftovers, abortRebase, keepRef, keepBranchTip, preservedRef}
}
