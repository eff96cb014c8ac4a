/** Which worktree has a branch checked out (`git worktree list --porcelain`), SPEC 18.3a. */
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {firstLine, git} from './run.js'

export interface WorktreeEntry {
  path: string
  /** `refs/heads/…`, null when detached */
  branch: string | null
  head: string | null
}

/**
 * Every worktree of the repository. `git worktree list` dies ("failed to read
 * .git/worktrees/<x>/commondir") while another process removes a worktree, and then
 * prints nothing: that must never read as "no worktree has the base checked out"
 * (landing would then move a checked-out base with update-ref, behind its index).
 * So it is asked again, and a list that still fails throws.
 */
export async function listWorktrees(cwd: string, env: NodeJS.ProcessEnv): Promise<WorktreeEntry[]> {
  let r = await git(['worktree', 'list', '--porcelain'], {cwd, env})
  for (let i = 0; r.code !== 0 && i < 4; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20 * (i + 1)))
    r = await git(['worktree', 'list', '--porcelain'], {cwd, env})
  }
  if (r.code !== 0) throw new HelixError(`helix: git worktree list failed: ${sanitize(firstLine(r))}`, EXIT.ERROR)
  const out: WorktreeEntry[] = []
  let cur: WorktreeEntry | null = null
  for (const line of r.stdout.split('\n')) {
    if (line.startsWith('worktree ')) {
      cur = {path: line.slice('worktree '.length), branch: null, head: null}
      out.push(cur)
    } else if (cur && line.startsWith('branch ')) cur.branch = line.slice('branch '.length)
    else if (cur && line.startsWith('HEAD ')) cur.head = line.slice('HEAD '.length)
  }
  return out
}

/**
 * The path of the worktree that has `refs/heads/<branch>` checked out, or null. `cwd`
 * (the project's main worktree, whose top level is `top`) is asked first, with one `symbolic-ref`: the common case needs no list of every worktree.
 */
export async function checkedOutAt(branch: string, cwd: string, top: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const head = await git(['symbolic-ref', '-q', 'HEAD'], {cwd, env})
  if (head.code === 0 && head.stdout.trim() === `refs/heads/${branch}`) return top
  return (await listWorktrees(cwd, env)).find((w) => w.branch === `refs/heads/${branch}`)?.path ?? null
}
