/**
 * Running git without a shell (SPEC 15). Every argument is one argv entry, so an
 * untrusted bead id can never become a shell word; refs and paths built from ids
 * are validated in `names.ts` before they get here.
 */
import {spawn} from 'node:child_process'
import path from 'node:path'
import {errorMessage} from '../util/errors.js'

export interface GitResult {
  code: number
  stdout: string
  stderr: string
}

/**
 * Variables a parent git (a hook, `git rebase --exec`) may have set that would
 * point our git at another repository or index.
 */
const GIT_LOCAL_ENV = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR', 'GIT_PREFIX', 'GIT_NAMESPACE']

/**
 * The environment helix's own git calls run with: English messages (we parse
 * a few), no prompts, no editor, and an identity when the repository has none
 * (a commit must never fail for want of `user.email`).
 */
export function gitEnv(env: NodeJS.ProcessEnv, identity?: {name: string; email: string} | null): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {...env, LC_ALL: 'C', LANG: 'C', GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true', GIT_SEQUENCE_EDITOR: 'true', GIT_MERGE_AUTOEDIT: 'no'}
  for (const k of GIT_LOCAL_ENV) delete out[k]
  if (identity) {
    out.GIT_AUTHOR_NAME ??= identity.name
    out.GIT_AUTHOR_EMAIL ??= identity.email
    out.GIT_COMMITTER_NAME ??= identity.name
    out.GIT_COMMITTER_EMAIL ??= identity.email
  }
  return out
}

const WORKTREES = `${path.sep}.helix${path.sep}worktrees${path.sep}`

/**
 * `env` fenced for a process whose cwd is inside an attempt worktree
 * (`<root>/.helix/worktrees/<id>-<n>/…`): GIT_CEILING_DIRECTORIES stops git's
 * repository discovery at `.helix/worktrees`. A worktree whose `.git` file is gone
 * (a `git worktree remove` or `rm -r` cut short by a kill, a dead run's orphaned
 * agent) is then "not a git repository" instead of silently being the project's
 * own checkout, where an `add -A`, `commit` or `restore` would rewrite the
 * operator's index and branch. Any other cwd gets `env` unchanged.
 */
export function fencedEnv(cwd: string, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const dir = path.resolve(cwd)
  const at = dir.lastIndexOf(WORKTREES)
  if (at < 0) return env
  const ceiling = dir.slice(0, at + WORKTREES.length - 1)
  const prev = env.GIT_CEILING_DIRECTORIES
  return {...env, GIT_CEILING_DIRECTORIES: prev ? `${ceiling}${path.delimiter}${prev}` : ceiling}
}

/** `git <args>` in `cwd` (fenced, see `fencedEnv`); never throws for a non-zero exit (a missing git binary gives code 127). */
export function git(args: string[], opts: {cwd: string; env: NodeJS.ProcessEnv}): Promise<GitResult> {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    let child
    try {
      child = spawn('git', args, {cwd: opts.cwd, env: fencedEnv(opts.cwd, opts.env), stdio: ['ignore', 'pipe', 'pipe']})
    } catch (error) {
      resolve({code: 127, stdout: '', stderr: errorMessage(error)})
      return
    }
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
    child.on('error', (error) => resolve({code: 127, stdout, stderr: stderr || error.message}))
    child.on('close', (code, signal) => resolve({code: code ?? (signal ? 128 : 1), stdout, stderr}))
  })
}

/** The first non-empty line of git's complaint, for a one-line reason. */
export function firstLine(r: GitResult): string {
  const line = `${r.stderr}\n${r.stdout}`.split('\n').map((l) => l.trim()).find((l) => l.length > 0)
  return line ?? `git exited ${r.code}`
}
