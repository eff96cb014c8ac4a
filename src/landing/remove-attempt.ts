/**
 * Removing an attempt's worktree and its `helix/<id>-<n>` branch, as the remote and the
 * pull-request landings both do once the work is on the remote (or preserved there).
 */
import {existsSync} from 'node:fs'
import {rm} from 'node:fs/promises'
import type {Repo} from '../git/repo.js'

export async function removeAttemptWorktree(repo: Repo, top: string, branch: string): Promise<void> {
  // prune only what `worktree remove` could not: a routine prune races another slot's `worktree add`
  if (!existsSync(top) || (await repo.run(['worktree', 'remove', '--force', '--force', top])).code !== 0) {
    await rm(top, {recursive: true, force: true})
    await repo.run(['worktree', 'prune'])
  }
  const sha = await repo.revParse(`refs/heads/${branch}`)
  if (sha) await repo.deleteRef(`refs/heads/${branch}`, sha)
}
