/**
 * The attempts a dead run left behind (SPEC 18.2): every `.helix/worktrees/<id>-<n>`
 * and every `helix/<id>-<n>` branch, with what reconciliation needs to decide
 * about it: its tip, how many of its commits are not on the base, whether it
 * holds uncommitted changes, and the metadata written at its claim. Read-only.
 */
import {existsSync, readFileSync, readdirSync, realpathSync} from 'node:fs'
import path from 'node:path'
import {readAttemptMeta, type AttemptMeta} from './attempt-meta.js'
import {listWorktrees} from './checked-out.js'
import {idProblem, touchesTracker} from './names.js'
import {git, type GitResult} from './run.js'

export interface LeftoverAttempt {
  bead: string
  attempt: number
  /** `helix/<id>-<n>` when that branch exists */
  branch: string | null
  /** absolute path of `.helix/worktrees/<id>-<n>` when it exists */
  worktree: string | null
  /** the worktree's HEAD is detached */
  detached: boolean
  /** the work's tip: the worktree's HEAD, else the branch */
  tip: string | null
  /** commits of the tip not on the base */
  ahead: number
  /** uncommitted changes (tracker files aside) */
  dirty: boolean
  meta: AttemptMeta | null
}

const NAME = /^(.+)-(\d+)$/

function real(p: string): string {
  try {
    return realpathSync(p)
  } catch {
    return p
  }
}

/** `<id>-<n>` → id and n, when the id can name a ref */
export function parseAttemptName(name: string): {bead: string; attempt: number} | null {
  const m = NAME.exec(name)
  if (!m) return null
  const bead = m[1] as string
  const attempt = Number(m[2])
  if (idProblem(bead) || !Number.isSafeInteger(attempt) || attempt < 1) return null
  return {bead, attempt}
}

/**
 * Every helix attempt in the repository of `root`, except those `owned` names
 * (`<id>-<n>`) a live run holds. `base` is the base branch name, or a full ref
 * (`refs/remotes/origin/main` for a `--remote` run, whose base is the remote's).
 */
export async function scanAttempts(root: string, env: NodeJS.ProcessEnv, base: string, owned: ReadonlySet<string> = new Set()): Promise<LeftoverAttempt[]> {
  const run = (args: string[], cwd = root): Promise<GitResult> => git(args, {cwd, env})
  const wtBase = path.join(real(root), '.helix', 'worktrees')
  const found = new Map<string, LeftoverAttempt>()
  const entry = (name: string): LeftoverAttempt | null => {
    const p = parseAttemptName(name)
    if (!p || owned.has(name)) return null
    let e = found.get(name)
    if (!e) {
      e = {bead: p.bead, attempt: p.attempt, branch: null, worktree: null, detached: false, tip: null, ahead: 0, dirty: false, meta: null}
      found.set(name, e)
    }
    return e
  }
  const rebasing = new Set<LeftoverAttempt>()
  for (const w of await listWorktrees(root, env)) {
    if (path.dirname(w.path) !== wtBase) continue
    const name = path.basename(w.path)
    const e = entry(name)
    if (!e) continue
    e.worktree = w.path
    e.detached = w.branch === null
    e.tip = w.head
    // a rebase stopped when the run died (a conflict handed to the resolve action, SPEC 20.4) detaches
    // HEAD, at the base's tip or part way: the work is the branch being rebased, which aborting puts back
    if (e.detached && (await rebasingBranch(run, w.path)) === `refs/heads/helix/${name}`) {
      e.detached = false
      e.tip = null
      rebasing.add(e)
    }
  }
  if (existsSync(wtBase))
    for (const name of readdirSync(wtBase)) {
      const e = found.get(name) ?? entry(name)
      if (e && !e.worktree && existsSync(path.join(wtBase, name, '.git'))) e.worktree = path.join(wtBase, name)
    }
  const refs = (await run(['for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads/helix/'])).stdout.split('\n').filter(Boolean)
  for (const line of refs) {
    const [short = '', sha = ''] = line.split(' ')
    const e = entry(short.slice('helix/'.length))
    if (!e) continue
    e.branch = short
    e.tip ??= sha
  }
  for (const e of found.values()) {
    e.meta = await readAttemptMeta(root, e.bead, e.attempt)
    if (e.worktree && existsSync(e.worktree)) {
      const st = (await run(['status', '--porcelain', '-z', '--untracked-files=all'], e.worktree)).stdout.split('\0')
      // a stopped rebase's files are the rebase's, not work: aborting it (adopt, preserve) restores the branch's
      e.dirty = !rebasing.has(e) && st.some((l) => l.length > 3 && !touchesTracker(l.slice(3)))
      if (!e.tip) e.tip = (await run(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], e.worktree)).stdout.trim() || null
    }
    if (e.tip) {
      const n = Number((await run(['rev-list', '--count', e.tip, '--not', base.startsWith('refs/') ? base : `refs/heads/${base}`])).stdout.trim())
      e.ahead = Number.isFinite(n) ? n : 0
    }
  }
  return [...found.values()].sort((a, b) => a.bead.localeCompare(b.bead) || a.attempt - b.attempt)
}

/** the branch a rebase in progress in the worktree at `dir` is rebasing (`refs/heads/…`), or null */
async function rebasingBranch(run: (args: string[], cwd?: string) => Promise<GitResult>, dir: string): Promise<string | null> {
  const r = await run(['rev-parse', '--git-path', 'rebase-merge/head-name', '--git-path', 'rebase-apply/head-name'], dir)
  if (r.code !== 0) return null
  for (const p of r.stdout.split('\n').map((l) => l.trim()).filter(Boolean)) {
    try {
      return readFileSync(path.resolve(dir, p), 'utf8').trim() || null
    } catch {
      // not this kind of rebase
    }
  }
  return null
}
