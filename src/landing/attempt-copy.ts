/**
 * What the remote and pull-request landings share about an attempt worktree whose
 * tracker is its own copy (SPEC 19.2): taking the agent's copy out of the worktree
 * (kept beside the attempt, so a kill before the push loses nothing, 20.2), putting
 * it back while a resolve works on the attempt (20.4: the copy still carries the
 * close, and the resolve must leave it alone), committing the agent's leftovers,
 * merging the copy's edits into the tracker at the tip being landed on, and
 * removing the worktree once its work is on the remote.
 */
import {existsSync} from 'node:fs'
import {lstat, mkdir, readFile, writeFile, rm} from 'node:fs/promises'
import path from 'node:path'
import {firstLine, type GitResult} from '../git/run.js'
import {worktreeRel} from '../git/names.js'
import type {Repo} from '../git/repo.js'
import {attemptTrackerFile, removeAttemptMeta} from '../git/attempt-meta.js'
import {parseAttemptName} from '../git/leftovers.js'
import {applyAttemptEdits} from '../remote/attempt-tracker.js'
import {editTrackerText} from '../remote/scratch-tracker.js'
import {parseTracker} from '../tracker/codec.js'
import {mutateTracker} from '../tracker/store.js'
import type {ProjectPaths} from '../util/root.js'
import type {Repair, Workspace} from '../loop/ports.js'
import {UNMERGED_PATHS, type Leftovers} from './preserve-work.js'
import {createRepairCheck} from './repair-check.js'
import {removeAttemptWorktree} from './remove-attempt.js'

export interface AttemptCopyDeps {
  root: string
  /** the tracker file relative to the repository top */
  trackerRel: string
  scratch: string
  repo: Repo
  run: (args: string[], cwd: string) => Promise<GitResult>
  /** the base's tracker text at a commit */
  trackerAt: (commit: string) => Promise<string>
}

export function createAttemptCopy(d: AttemptCopyDeps) {
  const wtTop = (ws: Pick<Workspace, 'bead' | 'attempt'>) => path.join(d.root, worktreeRel(ws.bead, ws.attempt))
  const fileIn = (top: string) => path.join(top, d.trackerRel)
  const key = (ws: Pick<Workspace, 'bead' | 'attempt'>) => `${ws.bead}-${ws.attempt}`
  /** the copies put back for a resolve, by attempt: what the worktree must still hold after it */
  const putBack = new Map<string, string>()

  /** the agent's tracker copy, then the file put back to HEAD so git sees a clean tracker */
  async function takeTrackerCopy(top: string): Promise<string> {
    const file = fileIn(top)
    let text = existsSync(file) ? await readFile(file, 'utf8') : ''
    // the agent's copy outlives the file's restore (a kill before the push, SPEC 20.2)
    const name = parseAttemptName(path.basename(top))
    const saved = name ? attemptTrackerFile(d.root, name.bead, name.attempt) : null
    const flagged = (await d.run(['ls-files', '-v', '--', d.trackerRel], top)).stdout.startsWith('S ')
    if (saved && flagged) {
      await mkdir(path.dirname(saved), {recursive: true})
      await writeFile(saved, text)
    } else if (saved && existsSync(saved)) text = await readFile(saved, 'utf8')
    await d.run(['update-index', '--no-skip-worktree', '--', d.trackerRel], top)
    await d.run(['checkout', '-q', 'HEAD', '--', d.trackerRel], top)
    return text
  }

  /**
   * SPEC 20.4: while a resolve works on the attempt, its tracker directory holds the
   * agent's copy again (the close, the claim's token), out of git's sight as during
   * the attempt. Written only into a real `.ddx` directory, never through a link.
   */
  async function putTrackerCopy(ws: Workspace, text: string): Promise<void> {
    const top = wtTop(ws)
    putBack.set(key(ws), text)
    const file = fileIn(top)
    const dir = await lstat(path.dirname(file)).catch(() => null)
    if (!dir?.isDirectory()) return
    await rm(file, {force: true})
    await writeFile(file, text, {flag: 'wx'})
    await d.run(['update-index', '--skip-worktree', '--', d.trackerRel], top)
  }

  /** the landing of this attempt is over (landed or preserved): nothing to compare any more */
  const forget = (ws: Workspace): void => void putBack.delete(key(ws))

  async function commitLeftovers(ws: Workspace): Promise<Leftovers> {
    const top = wtTop(ws)
    // conflicts left unresolved are never committed for landing (preserve-work.ts)
    const conflicts = (await d.run(UNMERGED_PATHS, top)).stdout.split('\0').filter(Boolean)
    if (conflicts.length > 0) return {kind: 'refused', why: 'unresolved conflicts', archive: '', conflicts}
    await d.run(['add', '-A'], top)
    await d.run(['reset', '-q', '--', d.trackerRel], top)
    if ((await d.run(['diff', '--cached', '--quiet'], top)).code === 0) return {kind: 'none'}
    // the repository's hooks are its owner's policy: a refusal means not landed
    const c = await d.run(['commit', '-q', '-m', `helix: uncommitted work of ${ws.bead} attempt ${ws.attempt}`], top)
    return c.code === 0 ? {kind: 'committed'} : {kind: 'refused', why: firstLine(c), archive: ''}
  }

  const check = createRepairCheck({run: d.run, wtTop, commitLeftovers})

  /** SPEC 20.4: what done means (repair-check.ts), and the attempt's tracker copy as the resolve found it */
  async function verifyRepair(ws: Workspace, repair: Repair): Promise<string | null> {
    const bad = await check.verifyRepair(ws, repair)
    if (bad) return bad
    const want = putBack.get(key(ws))
    if (want === undefined) return null
    const file = fileIn(wtTop(ws))
    const st = await lstat(file).catch(() => null)
    const now = st?.isFile() ? await readFile(file, 'utf8') : null
    if (now === want) return null
    await putTrackerCopy(ws, want)
    return "the resolve changed the attempt's tracker copy (put back as it was)"
  }

  /** the tracker at `onto` with the attempt's own edits (by bead id) and `deferred` bookkeeping applied */
  async function mergedTracker(ws: Workspace, agentText: string, onto: string, deferred: ReadonlyArray<(p: ProjectPaths) => Promise<void>> = []): Promise<string> {
    const before = parseTracker(await d.trackerAt(ws.baseTip), 'before')
    const after = parseTracker(agentText, 'after')
    return editTrackerText(d.scratch, `land-${ws.bead}-${ws.attempt}`, await d.trackerAt(onto), async (p) => {
      await mutateTracker(p, (snap) => {
        const changed = applyAttemptEdits(before, after, snap, {bead: ws.bead})
        return {beads: changed.length > 0 ? snap.beads : null, result: null}
      })
      for (const edit of deferred) await edit(p)
    })
  }

  async function removeWorktree(ws: Workspace): Promise<void> {
    forget(ws)
    await removeAttemptWorktree(d.repo, wtTop(ws), ws.branch)
    await removeAttemptMeta(d.root, ws.bead, ws.attempt)
  }

  /** the attempt's commits on top of `onto`, for the resolve prompt */
  const commitsOf = async (ws: Workspace, onto: string): Promise<string[]> =>
    (await d.run(['log', '--reverse', '--format=%h %s', `${onto}..refs/heads/${ws.branch}`], wtTop(ws))).stdout.split('\n').filter(Boolean).slice(0, 50)

  return {wtTop, fileIn, takeTrackerCopy, putTrackerCopy, forget, commitLeftovers, verifyRepair, mergedTracker, removeWorktree, commitsOf}
}

export type AttemptCopy = ReturnType<typeof createAttemptCopy>
