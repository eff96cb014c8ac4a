/**
 * The look at every pull-request claim on the remote, whichever host made it
 * (SPEC 20.5), at start and then every `--pr-poll` seconds:
 *  - merged: the claim ref is deleted (compare-and-delete at its value) and so is
 *    helix's branch; the bead's close reached the base with the merge.
 *  - closed without merge: the branch tip is kept on `refs/helix/preserved/<id>/<n>`
 *    (pushed create-only), the failure is counted (refs/helix/state) with a note
 *    quoting the closing comment, then the claim goes: the bead is free again.
 *  - open and conflicting with the base: the branch is rebased in a scratch worktree,
 *    the tracker merged by bead id (the merge driver's own merge), and pushed again
 *    (forced, to helix/<id> only). A conflict outside the tracker, or a failing
 *    required check, goes to the resolve integration point; without one the pull
 *    request stays for a person, said once.
 */
import {existsSync} from 'node:fs'
import {mkdir, rm} from 'node:fs/promises'
import path from 'node:path'
import {firstLine} from '../git/run.js'
import {idProblem, preservedRefName} from '../git/names.js'
import type {RemoteClaim} from '../remote/claim-refs.js'
import type {RemoteBase} from '../remote/base.js'
import {refLine} from '../remote/push.js'
import {mergeTracker} from '../tracker/merge.js'
import {parseTracker} from '../tracker/codec.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {Forge, PrView} from '../forge/types.js'
import type {Fleet} from '../remote/fleet.js'
import {prBranch} from './pr-shared.js'
import {verifyPrRound, writeCheckLog, type PrResolver} from './pr-resolve.js'
import {adoptOrphanPrs} from './pr-adopt.js'

export interface OpenPr {
  bead: string
  url: string
  host: string
  openedAt: string
  view: PrView | null
}

export interface SweepOptions {
  root: string
  remote: string
  base: string
  trackerRel: string
  scratch: string
  fleet: Fleet
  plain: RemoteBase
  forge: Forge
  now: () => Date
  log: (line: string) => void
  /** a note on the bead (refs/helix/state) */
  note: (bead: string, text: string) => Promise<void>
  /** SPEC 20.4: the resolve call (absent: a conflict outside the tracker or a red check stays for a person) */
  resolve?: PrResolver
  /** --resolve-attempts: rounds per pull request that may fail before it stays for a person */
  resolveAttempts?: number
  /** this host: other hosts' expired claims whose pull request is open are adopted (absent: none are) */
  host?: string
}

export interface Sweep {
  /** one look at every pull-request claim; returns how many beads changed state (merged or freed) */
  run(): Promise<number>
  /** the pull requests seen open at the last look */
  open(): OpenPr[]
  /** pull requests left for a person (said once), for the blocker report */
  stuck(): Map<string, string>
  /** a pull request this run just opened (counted until the next look finds it) */
  opened(pr: OpenPr): void
}

export function createSweep(o: SweepOptions): Sweep {
  const g = (args: string[], cwd = o.root) => o.plain.git(args, cwd)
  let openPrs: OpenPr[] = []
  // a look lists the claims once; a pull request this run opens while a look is under way may be missing
  // from that list, so it is kept until a look that started after it was opened (looks counts them)
  let looks = 0
  const openedIn = new Map<string, number>()
  const stuck = new Map<string, string>()
  const rebasedAt = new Map<string, string>()
  /** per bead: resolve rounds that failed (verification, or the check again on the repaired head) */
  const failedRounds = new Map<string, number>()
  /** per bead: the head a failing check was last handled on, and the head a check round pushed */
  const checkHandled = new Map<string, string>()
  const checkFixed = new Map<string, string>()
  const maxRounds = o.resolveAttempts ?? 2
  const scratchBranch = (bead: string) => `helix-pr-resolve/${bead}`
  const t = () => o.now().toISOString().slice(11, 19)

  async function remoteBranchSha(bead: string): Promise<string | null> {
    const r = await g(['ls-remote', o.remote, `refs/heads/${prBranch(bead)}`])
    return r.code === 0 ? (r.stdout.split('\t')[0]?.trim() || null) : null
  }

  async function deleteBranch(bead: string, sha: string | null): Promise<void> {
    if (!sha) return
    const ref = `refs/heads/${prBranch(bead)}`
    await o.plain.push([`--force-with-lease=${ref}:${sha}`, o.remote, `:${ref}`])
  }

  /** true when the claim went (the close is on the base); false: the pull request is still listed */
  async function merged(c: RemoteClaim, v: PrView): Promise<boolean> {
    // the close travels inside the pull request: a merge that did not bring it to the base (a forge's wrong
    // answer, a pull request retargeted to another branch) frees nothing and deletes no work: a person decides
    const tip = await o.plain.fetch()
    if (!tip) return false
    if (parseTracker(await o.plain.trackerAt(tip), 'tip').byId.get(c.bead)?.status !== 'closed') {
      once(c.bead, `${sanitize(o.forge.name)} says ${v.url} merged, but ${c.bead} is not closed on ${o.base}; its work stays on ${prBranch(c.bead)} (to free the bead: git push ${o.remote} :refs/helix/claims/${c.bead})`)
      return false
    }
    const r = await o.fleet.claims.release(c.bead, c.sha)
    if (!r.ok) return false
    await deleteBranch(c.bead, await remoteBranchSha(c.bead))
    o.log(`helix: [${t()}] merged ${sanitize(c.bead)} (${sanitize(v.url)}${v.mergeCommit ? `, ${sanitize(v.mergeCommit.slice(0, 12))}` : ''})`)
    return true
  }

  async function closed(c: RemoteClaim, v: PrView): Promise<void> {
    const sha = await remoteBranchSha(c.bead)
    let kept: string | null = null
    if (sha) {
      let n = Math.max(1, c.message?.attempt ?? 1)
      while ((await g(['rev-parse', '--verify', '-q', preservedRefName(c.bead, n)])).code === 0) n++
      kept = preservedRefName(c.bead, n)
      const f = await g(['fetch', '-q', '--no-tags', o.remote, `refs/heads/${prBranch(c.bead)}:${kept}`])
      if (f.code === 0) await o.plain.push([`--force-with-lease=${kept}:`, o.remote, `${kept}:${kept}`], false)
      else kept = null
    }
    const quote = v.lastComment ? `: "${v.lastComment.replace(/\s+/g, ' ').slice(0, 300)}"` : ' (no comment)'
    const reason = `pull request ${v.url} was closed without merge${quote}`
    // counted and noted before the claim goes, so no host picks the bead up before its backoff is there
    await o.fleet.endAttempt(c.bead, {reason, count: true})
    await o.note(c.bead, `PR CLOSED [${o.now().toISOString()}]: ${reason}${kept ? `; its work is kept at ${kept}` : ''}`)
    const r = await o.fleet.claims.release(c.bead, c.sha)
    if (!r.ok) return
    await deleteBranch(c.bead, sha)
    o.log(`helix: [${t()}] pull request for ${sanitize(c.bead)} closed without merge${sanitize(quote)}; ${sanitize(c.bead)} is free again${kept ? ` (work kept at ${sanitize(kept)})` : ''}`)
  }

  function once(bead: string, why: string): void {
    if (stuck.get(bead) === why) return
    stuck.set(bead, why)
    o.log(`helix: [${t()}] ${sanitize(bead)}: ${sanitize(why)}; the pull request stays for a person`)
  }

  /** rebase helix/<id> onto the base tip in a scratch worktree; the tracker merged by bead id */
  async function rebase(c: RemoteClaim, v: PrView): Promise<void> {
    const head = await remoteBranchSha(c.bead)
    const tip = await o.plain.fetch()
    if (!head || !tip || rebasedAt.get(c.bead) === `${head}:${tip}`) return
    rebasedAt.set(c.bead, `${head}:${tip}`)
    const local = `refs/helix/pr-rebase/${c.bead}`
    // a step that failed for a passing reason (git's answer, not the rebase's) is tried again at the next look
    if ((await g(['fetch', '-q', '--no-tags', o.remote, `+refs/heads/${prBranch(c.bead)}:${local}`])).code !== 0) return void rebasedAt.delete(c.bead)
    const dir = path.join(o.scratch, `pr-rebase-${c.bead}-${process.pid}`)
    await mkdir(o.scratch, {recursive: true})
    if (existsSync(dir)) await g(['worktree', 'remove', '--force', '--force', dir])
    await rm(dir, {recursive: true, force: true})
    try {
      if ((await g(['worktree', 'add', '-q', '-B', scratchBranch(c.bead), dir, local])).code !== 0) return void rebasedAt.delete(c.bead)
      const fork = (await g(['merge-base', local, tip])).stdout.trim()
      const attrs = path.join(o.scratch, 'pr-attributes')
      const {writeFile} = await import('node:fs/promises')
      await writeFile(attrs, `${o.trackerRel} merge=helix-keep\n`)
      let resolved = false
      const rb = await g(['-c', `core.attributesFile=${attrs}`, '-c', 'merge.helix-keep.driver=true', '-c', 'merge.helix-beads.driver=true', 'rebase', '-q', '--no-autostash', tip], dir)
      if (rb.code !== 0) {
        const files = (await g(['diff', '--name-only', '--diff-filter=U'], dir)).stdout.split('\n').filter(Boolean)
        const what = `conflict with ${o.base} in ${files.slice(0, 5).join(', ') || firstLine(rb)}`
        const bad = o.resolve && files.length ? await resolveConflict(c, v, dir, tip, files, local) : 'no resolve'
        if (bad) {
          await g(['rebase', '--abort'], dir)
          if (bad === 'retry') return void rebasedAt.delete(c.bead)
          return once(c.bead, bad === 'no resolve' ? what : `${what}, not resolved after ${maxRounds} round(s): ${bad}`)
        }
        resolved = true
      }
      // the tracker: three-way by bead id (19.3), the branch's edits onto the base's
      const show = async (rev: string) => Buffer.from((await g(['cat-file', 'blob', `${rev}:${o.trackerRel}`])).stdout)
      const merged = mergeTracker({base: await show(fork), ours: await show(tip), theirs: await show(local)}).buf.toString('utf8')
      const rebased = (await g(['rev-parse', 'HEAD'], dir)).stdout.trim()
      const next = merged === (await o.plain.trackerAt(rebased)) ? rebased : await o.plain.trackerCommit(rebased, merged, `helix: tracker of ${c.bead} merged onto ${o.base}`)
      const ref = `refs/heads/${prBranch(c.bead)}`
      const p = await o.plain.push([`--force-with-lease=${ref}:${head}`, o.remote, `${next}:${ref}`])
      if (!p.ok) {
        rebasedAt.delete(c.bead)
        return o.log(`helix: [${t()}] the rebased ${prBranch(c.bead)} was refused: ${sanitize(refLine(p, ref)?.summary ?? p.message)}`)
      }
      rebasedAt.set(c.bead, `${next}:${tip}`)
      o.log(`helix: [${t()}] ${resolved ? `resolved ${sanitize(c.bead)}, ` : ''}rebased ${sanitize(prBranch(c.bead))} onto ${sanitize(o.base)} (${sanitize(v.url)}), pushed again`)
    } finally {
      await g(['worktree', 'remove', '--force', '--force', dir])
      await rm(dir, {recursive: true, force: true})
      await g(['worktree', 'prune'])
      await g(['update-ref', '-d', local])
      await g(['branch', '-q', '-D', scratchBranch(c.bead)])
    }
  }

  const commitsOf = async (dir: string, onto: string) => (await g(['log', '--reverse', '--format=%h %s', `${onto}..HEAD`], dir)).stdout.split('\n').filter(Boolean).slice(0, 50)

  /**
   * SPEC 20.4 rounds on a conflict left in place in `dir`: null when resolved and
   * verified; 'retry' when no round could run (the agent unavailable: the next look
   * tries again); else the last problem once the rounds are spent.
   */
  async function resolveConflict(c: RemoteClaim, v: PrView, dir: string, tip: string, files: string[], local: string): Promise<string | null> {
    const commits = (await g(['log', '--reverse', '--format=%h %s', `${tip}..${local}`])).stdout.split('\n').filter(Boolean).slice(0, 50)
    let problem: string | undefined
    for (;;) {
      const spent = failedRounds.get(c.bead) ?? 0
      if (spent >= maxRounds) return problem ?? 'no rounds left'
      o.log(`helix: [${t()}] ${sanitize(c.bead)} CONFLICT in ${files.length} file(s) with ${sanitize(o.base)} (${sanitize(v.url)}) → resolve`)
      const r = await o.resolve!({bead: c.bead, dir, brief: {kind: 'conflict', baseTip: tip, branch: scratchBranch(c.bead), commits, paths: files, ...(problem ? {problem} : {})}})
      if (!r.ran) {
        o.log(`helix: [${t()}] ${sanitize(c.bead)}: no resolve round: ${sanitize(r.why)}`)
        return 'retry'
      }
      const bad = await verifyPrRound(g, {dir, bead: c.bead, branch: scratchBranch(c.bead), trackerRel: o.trackerRel, onto: tip, paths: files, kind: 'conflict'})
      if (!bad) return null
      failedRounds.set(c.bead, spent + 1)
      o.log(`helix: [${t()}] ${sanitize(c.bead)} resolve not done: ${sanitize(bad)}`)
      problem = bad
    }
  }

  /** SPEC 20.4 for a failing required check: its output to the agent in a fresh worktree of the branch, the fix pushed */
  async function fixCheck(c: RemoteClaim, v: PrView): Promise<void> {
    if (!o.resolve) return once(c.bead, `a required check fails on ${v.url}`)
    const head = await remoteBranchSha(c.bead)
    if (!head || checkHandled.get(c.bead) === head) return
    checkHandled.set(c.bead, head)
    // the check failed again on the head a round pushed: that round is spent
    if (checkFixed.get(c.bead) === head) failedRounds.set(c.bead, (failedRounds.get(c.bead) ?? 0) + 1)
    const spent = failedRounds.get(c.bead) ?? 0
    if (spent >= maxRounds) return once(c.bead, `a required check fails on ${v.url}, not resolved after ${spent} round(s)`)
    const tip = await o.plain.fetch()
    const local = `refs/helix/pr-rebase/${c.bead}`
    if (!tip || (await g(['fetch', '-q', '--no-tags', o.remote, `+refs/heads/${prBranch(c.bead)}:${local}`])).code !== 0) return void checkHandled.delete(c.bead)
    const dir = path.join(o.scratch, `pr-check-${c.bead}-${process.pid}`)
    const branch = scratchBranch(c.bead)
    await mkdir(o.scratch, {recursive: true})
    if (existsSync(dir)) await g(['worktree', 'remove', '--force', '--force', dir])
    await rm(dir, {recursive: true, force: true})
    try {
      if ((await g(['worktree', 'add', '-q', '-B', branch, dir, local])).code !== 0) return void checkHandled.delete(c.bead)
      const logText = await o.forge.checksLog(v.url).catch(() => '')
      const {tail, file} = await writeCheckLog(dir, logText)
      const fork = (await g(['merge-base', local, tip])).stdout.trim() || tip
      o.log(`helix: [${t()}] ${sanitize(c.bead)} required check failing (${sanitize(v.url)}) → resolve`)
      const r = await o.resolve({bead: c.bead, dir, brief: {kind: 'check', baseTip: fork, branch, commits: await commitsOf(dir, fork), check: 'the required checks of the pull request', tail, logFile: file}})
      if (!r.ran) {
        checkHandled.delete(c.bead)
        return o.log(`helix: [${t()}] ${sanitize(c.bead)}: no resolve round: ${sanitize(r.why)}`)
      }
      const bad = await verifyPrRound(g, {dir, bead: c.bead, branch, trackerRel: o.trackerRel, onto: head, paths: [], kind: 'check'})
      if (bad) {
        failedRounds.set(c.bead, spent + 1)
        checkHandled.delete(c.bead)
        return o.log(`helix: [${t()}] ${sanitize(c.bead)} resolve not done: ${sanitize(bad)}`)
      }
      const next = (await g(['rev-parse', 'HEAD'], dir)).stdout.trim()
      const ref = `refs/heads/${prBranch(c.bead)}`
      const p = await o.plain.push([`--force-with-lease=${ref}:${head}`, o.remote, `${next}:${ref}`])
      if (!p.ok) {
        checkHandled.delete(c.bead)
        return o.log(`helix: [${t()}] the resolved ${prBranch(c.bead)} was refused: ${sanitize(refLine(p, ref)?.summary ?? p.message)}`)
      }
      checkFixed.set(c.bead, next)
      o.log(`helix: [${t()}] resolved ${sanitize(c.bead)}: pushed ${sanitize(prBranch(c.bead))} again (${sanitize(v.url)})`)
    } finally {
      await g(['worktree', 'remove', '--force', '--force', dir])
      await rm(dir, {recursive: true, force: true})
      await g(['worktree', 'prune'])
      await g(['update-ref', '-d', local])
      await g(['branch', '-q', '-D', branch])
    }
  }

  async function run(): Promise<number> {
    const look = ++looks
    const listed = await o.fleet.claims.list()
    if (!listed) return 0
    // a pull request whose opener died before its claim took the URL is adopted, not redone (pr-adopt.ts)
    const list = o.host === undefined ? listed : await adoptOrphanPrs({...o, host: o.host}, listed)
    let changed = 0
    const seen: OpenPr[] = []
    for (const c of list) {
      const url = c.message?.pr_url
      if (!url || idProblem(c.bead)) continue
      let v: PrView | null = null
      try {
        v = await o.forge.view(url)
        if (v?.state === 'merged') {
          if (await merged(c, v)) {
            changed++
            continue
          }
        }
        if (v?.state === 'closed') {
          await closed(c, v)
          changed++
          continue
        }
        if (v?.mergeable === 'conflicting') await rebase(c, v)
        else if (v?.checks === 'failing') await fixCheck(c, v)
      } catch (error) {
        o.log(`helix: [${t()}] looking at ${sanitize(url)} failed: ${sanitize(errorMessage(error))}`)
      }
      seen.push({bead: c.bead, url, host: c.message?.host ?? '', openedAt: c.message?.claimed_at ?? '', view: v})
    }
    const late = openPrs.filter((p) => !seen.some((x) => x.bead === p.bead) && (openedIn.get(p.bead) ?? 0) >= look)
    openPrs = [...seen, ...late]
    return changed
  }

  return {
    run,
    open: () => openPrs,
    stuck: () => stuck,
    opened(pr) {
      openedIn.set(pr.bead, looks)
      openPrs = [...openPrs.filter((p) => p.bead !== pr.bead), pr]
    },
  }
}
