/**
 * SPEC 20.4: after a resolve call, helix verifies what done means before it runs
 * the land check again: no rebase, merge or cherry-pick in progress; HEAD is the
 * attempt's branch (not detached) and descends from the base tip; the agent's
 * leftovers committed as 15.2 commits them; no path that conflicted holds a line
 * starting with a conflict marker. Paths are read from the committed tree, never
 * through the worktree, so a symlink the agent made is not followed.
 */
import {existsSync} from 'node:fs'
import path from 'node:path'
import type {Repair, Workspace} from '../loop/ports.js'
import type {GitResult} from '../git/run.js'
import {sanitize} from '../util/sanitize.js'
import type {Leftovers} from './preserve-work.js'

export interface RepairCheckDeps {
  run: (args: string[], cwd: string) => Promise<GitResult>
  wtTop: (ws: {bead: string; attempt: number}) => string
  commitLeftovers: (ws: Workspace) => Promise<Leftovers>
}

const MARKER = /^(<<<<<<< |=======|>>>>>>> )/m

export function createRepairCheck(d: RepairCheckDeps) {
  const {run, wtTop, commitLeftovers} = d

  async function verifyRepair(ws: Workspace, repair: Repair): Promise<string | null> {
    const top = wtTop(ws)
    if (!existsSync(top)) return 'the worktree is gone'
    const states = (await run(['rev-parse', '--git-path', 'rebase-merge', '--git-path', 'rebase-apply', '--git-path', 'MERGE_HEAD', '--git-path', 'CHERRY_PICK_HEAD'], top)).stdout.split('\n').map((l) => l.trim())
    if (states.some((p) => p && existsSync(path.resolve(top, p)))) return 'a rebase, merge or cherry-pick is still in progress'
    const head = (await run(['symbolic-ref', '-q', 'HEAD'], top)).stdout.trim()
    if (head !== `refs/heads/${ws.branch}`) return `HEAD is not the attempt's branch ${ws.branch}${head ? ` (it is ${sanitize(head)})` : ' (detached)'}`
    if ((await run(['merge-base', '--is-ancestor', repair.onto, 'HEAD'], top)).code !== 0) return `HEAD does not descend from the base tip ${repair.onto.slice(0, 12)}`
    const left = await commitLeftovers(ws)
    if (left.kind === 'failed') return 'could not commit the changes the resolve left uncommitted'
    if (left.kind === 'refused') return `a hook refused the commit of the resolve's uncommitted changes (${sanitize(left.why)})`
    if (repair.kind === 'conflict') {
      for (const p of repair.paths) {
        const blob = await run(['cat-file', 'blob', `HEAD:${p}`], top)
        if (blob.code === 0 && MARKER.test(blob.stdout)) return `${sanitize(p)} still holds a conflict marker`
      }
    }
    return null
  }

  return {verifyRepair}
}
