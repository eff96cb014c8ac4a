/**
 * SPEC 18.3a: the project is the main worktree. `helix run` inside an attempt's
 * worktree (or any linked worktree on a `helix/*` branch) would start a second
 * run on a stale tracker copy and land onto an attempt branch; it is refused.
 */
import path from 'node:path'
import {git, gitEnv} from './run.js'

/** why `cwd` is no place for `helix run`, or null */
export async function linkedWorktreeProblem(cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const e = gitEnv(env)
  const r = await git(['rev-parse', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel'], {cwd, env: e})
  if (r.code !== 0) return null
  const [gitDir = '', common = '', top = ''] = r.stdout.split('\n').map((l) => l.trim())
  const branch = (await git(['symbolic-ref', '-q', '--short', 'HEAD'], {cwd, env: e})).stdout.trim()
  const linked = path.resolve(gitDir) !== path.resolve(common)
  const attemptDir = path.basename(path.dirname(top)) === 'worktrees' && path.basename(path.dirname(path.dirname(top))) === '.helix'
  if (branch.startsWith('helix/') || (linked && attemptDir))
    return `helix run: ${branch.startsWith('helix/') ? `the checkout is on helix's attempt branch ${branch}` : 'this is a helix attempt worktree'}; run helix in the project's main worktree (${path.dirname(path.resolve(common))})`
  return null
}
