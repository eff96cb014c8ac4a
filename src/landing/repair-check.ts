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
import {refusedWords, type Leftovers} from './preserve-work.js'

export interface RepairCheckDeps {
  run: (args: string[], cwd: string) => Promise<GitResult>
  wtTop: (ws: {bead: string; attempt: number}) => string
  commitLeftovers: (ws: Workspace) => Promise<Leftovers>
  /** keeps a commit on a create-only preserved ref (preserve-work's keepRef); absent: no drop guard */
  keepRef?: (ws: Workspace, tip: string) => Promise<string | null>
}

const MARKER = /^(<<<<<<< |=======|>>>>>>> )/m

const key = (ws: {bead: string; attempt: number}): string => `${ws.bead}\0${ws.attempt}`

export function createRepairCheck(d: RepairCheckDeps) {
  const {run, wtTop, commitLeftovers} = d
  /** the attempt branch's tip when its worktree was handed to the resolve action */
  const handed = new Map<string, string>()
  /** the preserved ref that keeps the work a resolve dropped */
  const dropped = new Map<string, string>()
  const count = async (range: string, cwd: string): Promise<number> => {
    const r = await run(['rev-list', '--count', range], cwd)
    return r.code === 0 ? Number(r.stdout.trim()) : -1
  }

  /**
   * Session 34: a resolve that "resolves" by resetting the branch to the base tip
   * passes every other test of done, and its landing would close the bead with none
   * of its work (and the agent's commits reachable from no ref). The work it dropped
   * is kept on a preserved ref at once, and the round is not done.
   */
  async function droppedWork(ws: Workspace, repair: Repair, top: string): Promise<string | null> {
    const before = handed.get(key(ws))
    if (!before || (await count(`${repair.onto}..HEAD`, top)) !== 0) return null
    if ((await count(`${repair.onto}..${before}`, top)) <= 0) return null
    const ref = dropped.get(key(ws)) ?? (await d.keepRef?.(ws, before)) ?? null
    if (ref) dropped.set(key(ws), ref)
    return `the resolve dropped all of the attempt's commits (HEAD is the base tip)${ref ? `; they are kept at ${ref}: rebase them onto the base tip again` : ''}`
  }

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
    if (left.kind === 'refused') return refusedWords(left, "the resolve's uncommitted changes")
    if (repair.kind === 'conflict') {
      for (const p of repair.paths) {
        const blob = await run(['cat-file', 'blob', `HEAD:${p}`], top)
        if (blob.code === 0 && MARKER.test(blob.stdout)) return `${sanitize(p)} still holds a conflict marker`
      }
    }
    return droppedWork(ws, repair, top)
  }

  /** the landing hands `ws` to the resolve action; its branch's tip then is what a resolve must not drop */
  async function handOver(ws: Workspace, branch: string): Promise<void> {
    const r = await run(['rev-parse', '-q', '--verify', `refs/heads/${branch}^{commit}`], wtTop(ws))
    if (r.code === 0) handed.set(key(ws), r.stdout.trim())
  }

  /** the ref holding work a resolve of `ws` dropped (for the preserve), and forget the attempt */
  function takeDropped(ws: {bead: string; attempt: number}): string | null {
    handed.delete(key(ws))
    const ref = dropped.get(key(ws)) ?? null
    dropped.delete(key(ws))
    return ref
  }

  return {verifyRepair, handOver, takeDropped}
}
