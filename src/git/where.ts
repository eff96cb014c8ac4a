/**
 * SPEC 18.3a: the project is the main worktree. `helix run` inside an attempt's
 * worktree (or any linked worktree on a `helix/*` branch) would start a second
 * run on a stale tracker copy and land onto an attempt branch; it is refused.
 */
import path from 'node:path'
import {git, gitEnv} from './run.js'

/**
 * What the start-up check learnt about the checkout, for a run to reuse instead of
 * asking git again a few milliseconds later (the landing's top level, prefix, common
 * directory and base branch).
 */
export interface CheckoutFacts {
  /** the directory git was asked in, resolved */
  dir: string
  /** the repository's top level */
  top: string
  /** `dir` relative to `top`: `''` or ending in `/` */
  prefix: string
  /** the common git directory, absolute: git's answer resolved against `dir` (symbolic links kept) */
  commonDir: string
  /** the checked-out branch's short name, null when HEAD is detached */
  branch: string | null
}

export interface CheckoutCheck {
  /** why `cwd` is no place for `helix run`, or null */
  problem: string | null
  /** null outside a git repository */
  facts: CheckoutFacts | null
}

/** two git processes: one rev-parse for the places, one symbolic-ref for the branch */
export async function inspectCheckout(cwd: string, env: NodeJS.ProcessEnv): Promise<CheckoutCheck> {
  const e = gitEnv(env)
  // the first two as git prints them by default (the common directory as `helix run` has always
  // resolved it, against the unresolved cwd), the last three absolute (for the linked-worktree test)
  const r = await git(['rev-parse', '--git-common-dir', '--show-prefix', '--path-format=absolute', '--git-dir', '--git-common-dir', '--show-toplevel'], {cwd, env: e})
  if (r.code !== 0) return {problem: null, facts: null}
  const [common0 = '', prefix = '', gitDir = '', common = '', top = ''] = r.stdout.split('\n').map((l) => l.trim())
  const head = await git(['symbolic-ref', '-q', '--short', 'HEAD'], {cwd, env: e})
  const branch = head.code === 0 ? head.stdout.trim() : ''
  const facts: CheckoutFacts = {dir: path.resolve(cwd), top, prefix, commonDir: path.resolve(cwd, common0), branch: branch || null}
  const linked = path.resolve(gitDir) !== path.resolve(common)
  const attemptDir = path.basename(path.dirname(top)) === 'worktrees' && path.basename(path.dirname(path.dirname(top))) === '.helix'
  if (branch.startsWith('helix/') || (linked && attemptDir))
    return {
      problem: `helix run: ${branch.startsWith('helix/') ? `the checkout is on helix's attempt branch ${branch}` : 'this is a helix attempt worktree'}; run helix in the project's main worktree (${path.dirname(path.resolve(common))})`,
      facts,
    }
  return {problem: null, facts}
}

/** `facts` when they were asked in `dir` (resolved), else null: facts of another directory answer nothing here */
export function factsIn(facts: CheckoutFacts | null | undefined, dir: string): CheckoutFacts | null {
  return facts && facts.dir === path.resolve(dir) ? facts : null
}
