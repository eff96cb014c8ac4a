/**
 * SPEC 20.3 against a land check that changes what it checks (session 34). The
 * check is the team's own command, run in the attempt's worktree; what lands must
 * be the candidate it was run on, not whatever the check left behind:
 * - a check that commits, resets, or switches the worktree's HEAD moved the
 *   candidate: the attempt is not landed for that reason (its commits would be
 *   unchecked, or the agent's work gone from the branch). The agent's commits stay
 *   reachable: when the candidate is no longer in HEAD's history, HEAD is detached
 *   at the candidate, so the preserve that follows keeps it (and keeps the moved
 *   branch beside it);
 * - a check that only left tracked files changed (a rewritten lockfile, a
 *   formatter's pass): those changes are the check's, not the agent's (every
 *   leftover of the agent was committed before the check), so they are put back.
 *   Otherwise a rebase after the base moved refuses to start, and a repair round
 *   would commit them as the agent's work.
 */
import type {GitResult} from '../git/run.js'
import {sanitize} from '../util/sanitize.js'

type Git = (args: string[], cwd: string) => Promise<GitResult>

/** the worktree's HEAD as one `status` sees it: its commit and its branch (null: detached or unborn) */
export interface CheckedCandidate {
  sha: string
  branch: string | null
}

interface Look extends CheckedCandidate {
  /** tracked files changed against HEAD (staged or not) */
  changed: boolean
}

async function look(git: Git, top: string): Promise<Look | null> {
  const r = await git(['status', '--porcelain=v2', '--branch', '--untracked-files=no', '--ignore-submodules=all', '-z'], top)
  if (r.code !== 0) return null
  let sha = ''
  let branch: string | null = null
  let changed = false
  for (const e of r.stdout.split('\0')) {
    if (e.startsWith('# branch.oid ')) sha = e.slice('# branch.oid '.length).trim()
    else if (e.startsWith('# branch.head ')) {
      const h = e.slice('# branch.head '.length).trim()
      branch = h === '(detached)' ? null : h
    } else if (e && !e.startsWith('#')) changed = true
  }
  return /^[0-9a-f]{40,64}$/.test(sha) ? {sha, branch, changed} : null
}

/** the candidate about to be checked (read right before the check runs) */
export async function candidateBefore(git: Git, top: string): Promise<CheckedCandidate | null> {
  const l = await look(git, top)
  return l ? {sha: l.sha, branch: l.branch} : null
}

/**
 * After the check: null when the candidate is as it was (tracked changes the check
 * left are put back first), or the reason the attempt is not landed.
 */
export async function candidateAfter(git: Git, top: string, before: CheckedCandidate | null): Promise<string | null> {
  if (!before) return null
  const now = await look(git, top)
  if (!now) return 'the worktree could not be read after the land check (git status failed); run helix doctor'
  if (now.sha === before.sha && now.branch === before.branch) {
    if (now.changed) {
      const r = await git(['restore', '--source=HEAD', '--staged', '--worktree', '--', ':/'], top)
      if (r.code !== 0) return 'the land check changed tracked files that could not be put back; fix the check so it leaves tracked files as they were'
    }
    return null
  }
  // the reason and the fix first: a NOT LANDED line keeps the first 120 characters
  const fix = 'fix the check so it never commits, resets or switches branches'
  const short = (sha: string) => sha.slice(0, 12)
  const words =
    now.branch === before.branch
      ? `the land check moved HEAD; ${fix} (${sanitize(before.branch ?? 'detached')} ${short(before.sha)} → ${short(now.sha)})`
      : `the land check switched branches; ${fix} (${sanitize(before.branch ?? 'detached')} → ${sanitize(now.branch ?? 'detached')})`
  // the agent's commits must stay reachable from HEAD, which is what the preserve keeps first
  const kept = await git(['merge-base', '--is-ancestor', before.sha, 'HEAD'], top)
  if (kept.code !== 0) await git(['switch', '-q', '--discard-changes', '--detach', before.sha], top)
  return words
}
