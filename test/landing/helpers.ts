import {execFileSync} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {makeTempDir} from '../support/tmp.js'

/** env for the tests' own git calls: no global config, a fixed identity */
export const gitTestEnv: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  LC_ALL: 'C',
}

export function g(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {cwd, env: gitTestEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe']}).trim()
}

/** a git repo on branch main with a.ts (5 lines), b.ts, and a committed tracker .ddx/beads.jsonl */
export function makeRepo(prefix = 'helix-landing-'): string {
  const root = makeTempDir(prefix)
  g(root, 'init', '-q', '-b', 'main')
  g(root, 'config', 'user.email', 'op@example.com')
  g(root, 'config', 'user.name', 'Operator')
  writeFileSync(path.join(root, 'a.ts'), 'line1\nline2\nline3\nline4\nline5\n')
  writeFileSync(path.join(root, 'b.ts'), 'export const b = 1\n')
  mkdirSync(path.join(root, '.ddx'))
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), '{"id":"hx-1","title":"one","status":"open"}\n')
  g(root, 'add', '-A')
  g(root, 'commit', '-q', '-m', 'initial')
  return root
}

export function write(dir: string, file: string, text: string): void {
  mkdirSync(path.dirname(path.join(dir, file)), {recursive: true})
  writeFileSync(path.join(dir, file), text)
}

export function read(dir: string, file: string): string {
  return readFileSync(path.join(dir, file), 'utf8')
}

/** what an agent does: write a file and commit it in its worktree */
export function agentCommit(dir: string, file: string, text: string, msg = `edit ${file}`): string {
  write(dir, file, text)
  g(dir, 'add', '-A')
  g(dir, '-c', 'user.name=Agent', '-c', 'user.email=agent@example.com', 'commit', '-q', '-m', msg)
  return g(dir, 'rev-parse', 'HEAD')
}

export function branches(root: string, pattern = 'helix/*'): string[] {
  return g(root, 'for-each-ref', '--format=%(refname:short)', `refs/heads/${pattern}`).split('\n').filter(Boolean)
}

export function worktrees(root: string): string[] {
  return g(root, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length))
}
