/** Which worktree has a branch checked out (`git worktree list --porcelain`), SPEC 18.3a. */
import {git} from './run.js'

export interface WorktreeEntry {
  path: string
  /** `refs/heads/…`, null when detached */
  branch: string | null
  head: string | null
}

export async function listWorktrees(cwd: string, env: NodeJS.ProcessEnv): Promise<WorktreeEntry[]> {
  const out: WorktreeEntry[] = []
  let cur: WorktreeEntry | null = null
  for (const line of (await git(['worktree', 'list', '--porcelain'], {cwd, env})).stdout.split('\n')) {
    if (line.startsWith('worktree ')) {
      cur = {path: line.slice('worktree '.length), branch: null, head: null}
      out.push(cur)
    } else if (cur && line.startsWith('branch ')) cur.branch = line.slice('branch '.length)
    else if (cur && line.startsWith('HEAD ')) cur.head = line.slice('HEAD '.length)
  }
  return out
}

/** the path of the worktree that has `refs/heads/<branch>` checked out, or null */
export async function checkedOutAt(branch: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  return (await listWorktrees(cwd, env)).find((w) => w.branch === `refs/heads/${branch}`)?.path ?? null
}
