/**
 * The landing proper for `--workers` (SPEC 15.2, 18.3a), split from local.ts:
 * what is checked and prepared in the attempt's own worktree before the land lock
 * (`readyToLand`), and the move of the base under it (`landLocked`): rebase again
 * only if the base moved, then `merge --ff-only` where the base is checked out (and
 * verify), or a compare-and-set `update-ref` where it is not.
 */
import {existsSync} from 'node:fs'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'
import type {Repair, Workspace} from '../loop/ports.js'
import {mergeTracker} from '../tracker/merge.js'
import {firstLine} from '../git/run.js'
import type {Repo} from '../git/repo.js'
import {worktreeRel} from '../git/names.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {refusedWords, type Leftovers, type RebaseLook} from './preserve-work.js'

export type Refused = {landed: false; reason: string; preservedRef: null}
/** `commits`: the landed commits, oldest first, when the landing already listed them (the verify after `merge --ff-only`) */
export type Landed = {landed: true; sha: string; from: string; commits?: string[]}
export const refused = (reason: string): Refused => ({landed: false, reason, preservedRef: null})
/** SPEC 20.4: the worktree is left as it is for the resolve action */
export type NeedsRepair = {landed: false; reason: string; preservedRef: null; repair: Repair}
/** SPEC 20.3: the base moved since the candidate was checked; rebase and check again */
export type Moved = {moved: true}
const conflictReason = (files: string[]): string => `conflict in ${sanitize(files.slice(0, 5).join(', '))}${files.length > 5 ? ', …' : ''}`

const MAX_LAND_ROUNDS = 3

export interface LandBaseDeps {
  root: string
  now: () => Date
  /** the typed git layer on the project root */
  git: () => Promise<Repo>
  base: () => Promise<string>
  baseTip: () => Promise<string>
  wtTop: (ws: {bead: string; attempt: number}) => string
  trackerFile: (f: string) => boolean
  /** where `branch` is checked out; `rootHead`: the project root's HEAD is known to be on it */
  checkedOutAt: (branch: string, rootHead?: boolean) => Promise<string | null>
  commitLeftovers: (ws: Workspace) => Promise<Leftovers>
  abortRebase: (top: string) => Promise<RebaseLook>
}

export function createLandBase(d: LandBaseDeps) {
  const {root, base, baseTip, wtTop, trackerFile, checkedOutAt, commitLeftovers, abortRebase} = d
  const run = async (args: string[], cwd: string) => (await d.git()).run(args, cwd)
  const names = async (args: string[], cwd: string) => (await d.git()).names(args, cwd)

  /**
   * The worktree's own tracker copy is neither read nor committed: put it back so a
   * rebase is not refused. `dirty`: its changed tracked files when already known.
   */
  async function discardTrackerCopy(top: string, dirty?: string[]): Promise<void> {
    dirty ??= (await names(['diff', '--name-only', '-z', '--no-renames', 'HEAD'], top)).filter(trackerFile)
    if (dirty.length) await run(['restore', '--source=HEAD', '--staged', '--worktree', '--', ...dirty], top)
  }

  /**
   * SPEC 20.4: a stop whose every conflicted path is the tracker is merged by helix's
   * own tracker merge (19.3) and the rebase goes on: no agent, no round. Returns the
   * conflicted paths left (none: the rebase finished).
   */
  async function mergeTrackerStops(top: string, files: string[]): Promise<string[]> {
    for (let step = 0; step < 1000 && files.length > 0 && files.every(trackerFile); step++) {
      for (const f of files) {
        const side = async (n: number): Promise<Buffer> => Buffer.from((await run(['cat-file', 'blob', `:${n}:${f}`], top)).stdout, 'utf8')
        const merged = mergeTracker({base: await side(1), ours: await side(2), theirs: await side(3)})
        await writeFile(path.join(top, f), merged.buf)
        await run(['add', '--', f], top)
      }
      const c = await run(['-c', 'core.editor=true', 'rebase', '--continue'], top)
      if (c.code === 0) return []
      files = await names(['diff', '--name-only', '-z', '--diff-filter=U'], top)
      if (files.length === 0) return ['(rebase stopped)']
    }
    return files
  }

  /**
   * Rebase the attempt onto `onto` in its worktree. A conflict is a refusal (the
   * rebase aborted), or with `keep` (20.4) a repair: the rebase stays stopped, the
   * markers in the files.
   */
  async function rebaseOnto(top: string, onto: string, keep = false): Promise<Refused | NeedsRepair | null> {
    if (await (await d.git()).isAncestor(onto, 'HEAD', top)) return null
    const rb = await run(['rebase', '-q', '--no-autostash', onto], top)
    if (rb.code === 0) return null
    let files = await names(['diff', '--name-only', '-z', '--diff-filter=U'], top)
    if (files.length > 0 && files.every(trackerFile)) {
      files = await mergeTrackerStops(top, files)
      if (files.length === 0) return null
    }
    if (keep && files.length > 0 && !files.every(trackerFile)) return {landed: false, reason: conflictReason(files), preservedRef: null, repair: {kind: 'conflict', onto, paths: files}}
    await run(['rebase', '--abort'], top)
    return refused(files.length ? conflictReason(files) : `rebase failed: ${sanitize(firstLine(rb))}`)
  }

  /**
   * What a landing checks and prepares in the attempt's own worktree, before the
   * land lock (the lock is held only while the base moves): its leftovers
   * committed, its tracker copy put back, still on its branch, no tracker file in its
   * commits, and rebased onto the base as it is now: `{onto}` (the tip it is rebased
   * onto) when it is ready.
   */
  async function readyToLand(ws: Workspace, keep = false): Promise<Refused | NeedsRepair | {onto: string}> {
    const top = wtTop(ws)
    const b = await base()
    if (!existsSync(top)) return refused(`the worktree ${worktreeRel(ws.bead, ws.attempt)} is gone`)
    // one look aborts a half-done rebase and tells the branch checked out (commits and the tracker copy leave it as it is)
    const look = await abortRebase(top)
    // the files of the attempt's commits (none may be the tracker's), read beside the status:
    // the two git processes run at once
    const commitFiles = () => names(['log', '--format=', '--name-only', '-z', '--no-renames', `refs/heads/${ws.branch}`, '--not', `refs/heads/${b}`, ws.baseTip], root)
    // one status answers the common case: the agent committed everything, and at most the
    // worktree's own tracker copy differs (it is put back, never committed)
    const [st, listed] = await Promise.all([run(['status', '--porcelain', '-z', '--untracked-files=all', '--no-renames'], top), commitFiles()])
    let files: string[] | null = listed
    const changed = st.code === 0 ? st.stdout.split('\0').filter(Boolean).map((e) => ({tracked: !e.startsWith('??'), file: e.slice(3)})) : null
    let headKnown = !look.aborted && look.head !== null
    if (changed === null || changed.some((c) => !trackerFile(c.file))) {
      // a commit runs the repository's hooks: ask for the branch and the commits' files again afterwards
      headKnown = false
      files = null
      const left = await commitLeftovers(ws)
      if (left.kind === 'failed') return refused('could not commit the work the agent left uncommitted')
      if (left.kind === 'refused') return refused(refusedWords(left, "the agent's uncommitted changes"))
      await discardTrackerCopy(top)
    } else await discardTrackerCopy(top, changed.filter((c) => c.tracked).map((c) => c.file))
    const head = headKnown ? look.head : await (await d.git()).headRef(top)
    if (head !== `refs/heads/${ws.branch}`) return refused(`the worktree is no longer on its branch ${ws.branch}`)
    const touched = (files ?? (await commitFiles())).filter(trackerFile)
    if (touched.length) return refused(`the attempt's commits touch the tracker (${sanitize([...new Set(touched)].slice(0, 3).join(', '))}); commits must never carry .ddx/`)
    // the base's tip read last, right before the rebase: a neighbour that lands after this read
    // makes the landing rebase again under the lock
    const onto = await baseTip()
    return (await rebaseOnto(top, onto, keep)) ?? {onto}
  }

  /**
   * Under the land lock: move the base to the attempt's tip by fast-forward only
   * (SPEC 15.2, 18.3a). With `checked` (a land check passed on `rebasedOnto`, 20.3) a
   * base that moved is not rebased here: `moved`, so the candidate is checked again.
   * With `keep` (20.4) a conflict met rebasing onto a base that moved meanwhile is a
   * repair: the rebase stays stopped and the lock is released for the resolve.
   */
  async function landLocked(ws: Workspace, rebasedOnto: string, checked = false, keep = false): Promise<Landed | Refused | Moved | NeedsRepair> {
    const top = wtTop(ws)
    const b = await base()
    if (!existsSync(top)) return refused(`the worktree ${worktreeRel(ws.bead, ws.attempt)} is gone`)
    for (let round = 0; round < MAX_LAND_ROUNDS; round++) {
      // both tips, and whether the root has the base checked out, in one for-each-ref; a tip it
      // did not list is asked again, for that read's own error
      const tips = await (await d.git()).forEachRef([`refs/heads/${b}`, `refs/heads/${ws.branch}`], {head: true})
      const cur = tips.find((t) => t.ref === `refs/heads/${b}`)?.sha ?? (await baseTip())
      if (checked && cur !== rebasedOnto) return {moved: true}
      // the base moved since the attempt was last rebased (another slot or process landed): rebase again
      const rb = cur === rebasedOnto ? null : await rebaseOnto(top, cur, keep)
      if (rb) return rb
      const listed = cur === rebasedOnto ? tips.find((t) => t.ref === `refs/heads/${ws.branch}`)?.sha : undefined
      rebasedOnto = cur
      const next = listed ?? (await branchTip(ws.branch))
      // every commit of the attempt was on the base already (the rebase dropped them as applied): nothing moves
      if (next === cur) return {landed: true, sha: cur, from: cur, commits: []}
      const where = await checkedOutAt(b, tips.find((t) => t.ref === `refs/heads/${b}`)?.head === true)
      if (where !== null) {
        // SPEC 18.3a: a checked-out base moves only by merge --ff-only in its own worktree, then is verified
        // a fast-forward writes no object: git's automatic maintenance after it would only hold the lock longer
        const m = await run(['-c', 'maintenance.auto=false', 'merge', '--ff-only', '-q', '--no-edit', next], where)
        if (m.code !== 0) {
          const text = `${m.stderr}\n${m.stdout}`
          if (/not possible to fast-forward/i.test(text) && (await (await d.git()).commitOf(`refs/heads/${b}`)) !== cur) {
            if (checked) return {moved: true}
            continue
          }
          const files = /would be overwritten/.test(text) ? text.split('\n').filter((l) => /^\t/.test(l)).map((l) => l.trim()) : []
          const at = where === root ? 'the project root' : sanitize(where)
          return refused(files.length ? `${at} has uncommitted changes the merge would overwrite (${sanitize(files.slice(0, 5).join(', '))})` : `merge --ff-only in ${at} refused: ${sanitize(firstLine(m))}`)
        }
        // one rev-list verifies the base and lists what landed: a walk from the base's tip
        // shows that tip first, so the first line is where the base is now
        const walked = await run(['rev-list', `${cur}..refs/heads/${b}`], root)
        const landedCommits = walked.code === 0 ? walked.stdout.split('\n').map((c) => c.trim()).filter(Boolean) : []
        if (landedCommits[0] !== next) return refused(`the base branch ${sanitize(b)} is not at the landed tip after the merge (the worktree at ${sanitize(where)} switched branches?)`)
        return {landed: true, sha: next, from: cur, commits: landedCommits.reverse()}
      } else {
        if (!(await (await d.git()).updateRef(`refs/heads/${b}`, next, cur, `helix: landed ${ws.bead} attempt ${ws.attempt} ${d.now().toISOString()}`))) {
          if (checked) return {moved: true}
          continue
        }
      }
      return {landed: true, sha: next, from: cur}
    }
    return refused(`the base branch ${sanitize(b)} kept moving during landing`)
  }

  /** the attempt branch's tip (`rev-parse`; a branch that is gone is an error, as before) */
  async function branchTip(branch: string): Promise<string> {
    const r = await run(['rev-parse', `refs/heads/${branch}`], root)
    if (r.code !== 0) throw new HelixError(`helix: git rev-parse failed: ${sanitize(firstLine(r))}`, EXIT.ERROR)
    return r.stdout.trim()
  }

  return {readyToLand, landLocked, rebaseOnto}
}
