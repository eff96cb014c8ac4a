// The landing tests' names for the rig's git helper (test/support/git.ts).
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {git as g, gitEnv as gitTestEnv, gitSeq, initRepo, writeFiles} from '../support/git.js'
import {makeTempDir} from '../support/tmp.js'

export {g, gitTestEnv}

/** a git repo on branch main with a.ts (5 lines), b.ts, and a committed tracker .ddx/beads.jsonl */
export function makeRepo(prefix = 'helix-landing-'): string {
  const root = makeTempDir(prefix)
  writeFiles(root, {'a.ts': 'line1\nline2\nline3\nline4\nline5\n', 'b.ts': 'export const b = 1\n', '.ddx/beads.jsonl': '{"id":"hx-1","title":"one","status":"open"}\n'})
  initRepo(root)
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
  return gitSeq(dir, ['add', '-A'], ['-c', 'user.name=Agent', '-c', 'user.email=agent@example.com', 'commit', '-q', '-m', msg], ['rev-parse', 'HEAD'])
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
