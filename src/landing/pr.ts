/**
 * `LoopLanding` for `helix run --remote <name> --land pr` (SPEC 20.5). Worktrees,
 * preserving and preserved refs are the remote landing's (19.2); `land` instead
 * rebases the attempt onto the fetched base tip, puts the bead's close into the
 * branch's tracker (by id, no claim field), force-pushes helix's own branch
 * `helix/<id>` (never any other), opens a pull request, and rewrites the claim
 * ref to carry `pr_url` (no expiry): the bead now awaits the merge. Nothing is
 * ever pushed to the base.
 */
import {existsSync, realpathSync} from 'node:fs'
import {mkdir, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {firstLine} from '../git/run.js'
import {saysUnreachable} from '../git/repo.js'
import {abortableSleep} from '../util/abort.js'
import {awayWaitMs, unreachableReason} from './remote.js'
import {preservedRefName, worktreeRel} from '../git/names.js'
import {claimRef} from '../remote/claim-refs.js'
import {refLine} from '../remote/push.js'
import type {RemoteBase} from '../remote/base.js'
import {parseTracker} from '../tracker/codec.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {forgeAway, forgeDenies, type Forge} from '../forge/types.js'
import type {LandOptions, LandResult, LoopLanding, Workspace} from '../loop/ports.js'
import {checkCandidate, writeCheckLog, type LandCheckSpec} from './land-check.js'
import {candidateAfter, candidateBefore} from './check-guard.js'
import type {Fleet} from '../remote/fleet.js'
import {prBody, prBranch, prClaimMessage, prTitle, type AutoMerge} from './pr-shared.js'
import {keptWords, refusedWords} from './preserve-work.js'
import {createAttemptCopy} from './attempt-copy.js'

export interface PrLandingOptions {
  root: string
  remote: string
  base: string
  trackerRel: string
  scratch: string
  host: string
  runId: string
  pid: number
  fleet: Fleet
  /** the base without the state overlay (the branch carries the base's own tracker) */
  plain: RemoteBase
  /** the remote landing: prepare, preserve, preserved refs */
  inner: LoopLanding
  forge: Forge
  /** --pr-auto-merge: asked for once a pull request opens (null: a person merges) */
  autoMerge: AutoMerge | null
  now: () => Date
  log: (line: string) => void
  /** a line for the summary too (a finished attempt waiting for the remote or the forge); default: log */
  notice?: (line: string) => void
  /** --max-offline: how long a forge that cannot be reached is waited for before the run stops (exit 4) */
  maxOfflineSec: number
  /** SPEC 20.3 `--land-check`: run on the rebased branch before the pull request is opened */
  landCheck?: LandCheckSpec
  /** a pull request was opened (the wiring counts it and restarts --pr-wait) */
  onOpened: (bead: string, url: string) => void
}


export function createPrLanding(o: PrLandingOptions): LoopLanding {
  const {fleet, plain} = o
  const g = (args: string[], cwd = o.root) => plain.git(args, cwd)
  let chain: Promise<unknown> = Promise.resolve()
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = chain.then(fn, fn)
    chain = p.catch(() => {})
    return p
  }

  const copy = createAttemptCopy({root: o.root, trackerRel: o.trackerRel, scratch: o.scratch, repo: plain.repo, run: (args, cwd) => g(args, cwd), trackerAt: (c) => plain.trackerAt(c)})
  const {wtTop, takeTrackerCopy, mergedTracker, removeWorktree} = copy

  /** `refused`: what refuses helix (the remote, the forge) in its words; `fix`: what the operator can do */
  type Fail = {landed: false; reason: string; preservedRef: null; checkTail?: string[]; refused?: string; fix?: string; unavailable?: true; away?: {what: 'remote' | 'forge'; message: string | null}}
  /** a remote that did not answer (git's words for a failed transport) is waited for; any other failure is the landing's */
  const awayFrom = (what: 'remote', message: string | null, f: Fail): Fail => (saysUnreachable(message) ? {...f, away: {what, message}} : f)

  /** the candidate whose land check passed, by attempt worktree, while its landing lasts */
  const passed = new Map<string, {head: string; words: string}>()
  let projectReal: string | null = null
  async function open(ws: Workspace, lo: LandOptions, repair: boolean): Promise<LandResult | Fail> {
    const info = lo.info
    const top = wtTop(ws)
    const fail = (reason: string, checkTail?: string[]): Fail => ({landed: false, reason, preservedRef: null, ...(checkTail ? {checkTail} : {})})
    if (!existsSync(top)) return fail(`the worktree ${worktreeRel(ws.bead, ws.attempt)} is gone`)
    const h = fleet.held.get(ws.bead)
    // the agent's copy (after a resolve: the one kept beside the attempt, put back for it)
    const agentText = await takeTrackerCopy(top)
    if (!h) return fail(`the claim on ${ws.bead} was lost (its lease expired or another host took it over)`)
    const left = await copy.commitLeftovers(ws)
    if (left.kind === 'refused') return fail(refusedWords(left, 'the work left uncommitted'))
    const tip = await plain.fetch()
    if (!tip) return awayFrom('remote', plain.lastFailure(), fail(unreachableReason(o.remote, plain.lastFailure())))
    // the remote answers this landing: the fleet need not wait for its own next look to know it
    if (fleet.offline()) void fleet.online().catch(() => {})
    if (h.lost) {
      // the lease ran out while the remote was away, not one lost to another host (20.1): the claim is
      // ours again only if it still holds our value there, by a renewal expecting it (as the remote landing)
      const rn = await fleet.claims.renew(ws.bead, h.sha, h.attempt)
      if (!rn.ok && rn.why === 'unreachable') return {...fail(unreachableReason(o.remote, rn.message)), away: {what: 'remote', message: rn.message}}
      if (!rn.ok) return fail(`the claim on ${ws.bead} was taken over by another host; nothing landed`)
      Object.assign(h, {sha: rn.sha, expiresAt: o.now().getTime() + fleet.claims.leaseMs, lost: false})
    }
    if ((await g(['merge-base', '--is-ancestor', tip, 'HEAD'], top)).code !== 0) {
      // the tracker is merged by bead id below, so git keeps the base's copy while rebasing
      const attrs = path.join(o.scratch, 'pr-attributes')
      await mkdir(o.scratch, {recursive: true})
      await writeFile(attrs, `${o.trackerRel} merge=helix-keep\n`)
      const rebase = await g(['-c', `core.attributesFile=${attrs}`, '-c', 'merge.helix-keep.driver=true', '-c', 'merge.helix-beads.driver=true', 'rebase', '-q', '--no-autostash', tip], top)
      if (rebase.code !== 0) {
        const files = (await g(['diff', '--name-only', '--diff-filter=U'], top)).stdout.split('\n').filter(Boolean)
        // SPEC 20.4: the conflict stays in place for the loop's resolve rounds (src/loop/resolve-step.ts)
        if (repair && files.length > 0) {
          await copy.putTrackerCopy(ws, agentText)
          return {landed: false, reason: `conflict in ${sanitize(files.slice(0, 5).join(', '))}`, preservedRef: null, repair: {kind: 'conflict', onto: tip, paths: files}}
        }
        await g(['rebase', '--abort'], top)
        return fail(files.length ? `conflict in ${sanitize(files.slice(0, 5).join(', '))}` : `rebase failed: ${sanitize(firstLine(rebase))}`)
      }
    }
    const head = (await g(['rev-parse', 'HEAD'], top)).stdout.trim()
    // SPEC 20.3: the land check on the rebased branch, before the pull request opens; the forge's checks gate it after that
    let checked: string | undefined
    // a landing that waited for the remote or the forge tries again on the same candidate: checked once
    const before = passed.get(wtTop(ws))
    if (o.landCheck && before?.head === head) checked = before.words
    else if (o.landCheck) {
      projectReal ??= realpathSync(o.root)
      const was = await candidateBefore(g, top)
      const c = await checkCandidate({...o.landCheck, ...(lo.signal ? {signal: lo.signal} : {})}, ws.dir, {bead: ws.bead, attempt: lo.attemptNo ?? ws.attempt, onto: tip, project: projectReal}, lo.onCheck)
      // the branch pushed is the candidate the check ran on, never what the check made of it
      const moved = await candidateAfter(g, top, was)
      if (lo.signal?.aborted) return fail('interrupted')
      if (moved) return fail(moved, c.run.tail)
      if (!c.passed) {
        // SPEC 20.4: a red check goes back to the agent as a conflict does
        if (repair) {
          await copy.putTrackerCopy(ws, agentText)
          return {landed: false, reason: c.reason, preservedRef: null, repair: {kind: 'check', onto: tip, rc: c.run.rc, tail: c.run.tail, logFile: await writeCheckLog(ws.dir, c.run.output)}}
        }
        return fail(c.reason, c.run.tail)
      }
      checked = `helix's land check passed on this branch rebased onto \`${tip.slice(0, 12)}\` (${Math.round(c.run.ms / 1000)}s).`
      passed.set(wtTop(ws), {head, words: checked})
    }
    const text = await mergedTracker(ws, agentText, head)
    const snap = parseTracker(text, 'branch')
    const bead = snap.byId.get(ws.bead)
    if (bead?.status !== 'closed') return fail(`${ws.bead} is not closed in the attempt's tracker`)
    const next = text === (await plain.trackerAt(head)) ? head : await plain.trackerCommit(head, text, `helix(${o.host}): close ${ws.bead}`)
    const branch = prBranch(ws.bead)
    // another attempt's work on the branch (a host that died before its pull request opened) is kept before it is forced
    await keepOthersBranch(ws.bead, branch, next)
    // helix's own branch: it may force it (SPEC 20.0), and nothing else
    const p = await plain.push(['--force', o.remote, `${next}:refs/heads/${branch}`])
    if (!p.ok && p.kind === 'rejected') {
      // the remote's own rule refuses helix's branch: nothing of the bead's, and every pull request would meet it
      return {...fail(`the remote ${o.remote} refused the push of ${branch}`), refused: `the remote ${sanitize(o.remote)} refuses helix's push of ${sanitize(branch)} (${sanitize(p.message)})`, fix: `helix pushes its branches helix/<id> for pull requests: let it push them on ${sanitize(o.remote)}`}
    }
    if (!p.ok) return p.kind === 'unreachable' ? awayFrom('remote', p.message, fail(unreachableReason(o.remote, p.message))) : fail(`the push of ${branch} was refused: ${sanitize(refLine(p, `refs/heads/${branch}`)?.summary ?? p.message)}`)
    let url: string
    try {
      url = (await o.forge.create({base: o.base, head: branch, title: prTitle(bead), body: prBody(bead, info, checked)})).url
    } catch (error) {
      const why = sanitize(errorMessage(error))
      // the forge refuses helix itself (a token without the right, a login gone): every pull request would meet it
      if (forgeDenies(why)) return {...fail(why), refused: `${sanitize(o.forge.name)} refuses to open pull requests (${why})`, fix: `give helix's login the right to open pull requests on ${sanitize(o.remote)} (${sanitize(o.forge.name) === 'gh' ? "'gh auth status' names the login and its scopes" : 'see the forge adapter'})`}
      if (forgeAway(why)) return {...fail(why), away: {what: 'forge', message: why}}
      return fail(why)
    }
    if (o.autoMerge) await o.autoMerge.request(url)
    // the claim now carries the pull request and never expires: the forge holds the lock
    h.landing = true
    if (h.renewing) await h.renewing
    const msg = prClaimMessage({host: o.host, run: o.runId, pid: o.pid, attempt: ws.attempt, url, now: o.now()})
    const c = await g(['commit-tree', '-m', JSON.stringify(msg), await emptyTree()])
    const ref = claimRef(ws.bead)
    const cp = await plain.push([`--force-with-lease=${ref}:${h.sha}`, o.remote, `${c.stdout.trim()}:${ref}`], false)
    if (!cp.ok && cp.kind === 'unreachable' && saysUnreachable(cp.message)) {
      // a claim left without its pull request expires and the bead would be redone: wait for the remote and
      // try again (the branch push is the same work, and gh pr create names the pull request it opened)
      h.landing = false
      return awayFrom('remote', cp.message, fail(unreachableReason(o.remote, cp.message)))
    }
    if (!cp.ok) o.log(`helix: the claim on ${sanitize(ws.bead)} could not take ${sanitize(url)} (${sanitize(refLine(cp, ref)?.summary ?? cp.message)}); the pull request stays open`)
    fleet.held.delete(ws.bead)
    o.onOpened(ws.bead, url)
    const commits = (await g(['rev-list', '--reverse', `${tip}..${next}`])).stdout.split('\n').filter(Boolean)
    await removeWorktree(ws)
    return {landed: true, sha: next, commits, pr: {url}}
  }

  /**
   * `helix/<id>` on the remote holding work other than this attempt's (its files differ, the tracker aside):
   * an attempt whose host died after pushing it and before its pull request opened, its claim since taken
   * over. Kept on the next free `refs/helix/preserved/<id>/<n>` (create-only) before the branch is forced.
   */
  async function keepOthersBranch(bead: string, branch: string, next: string): Promise<void> {
    const ls = await g(['ls-remote', o.remote, `refs/heads/${branch}`])
    const theirs = ls.code === 0 ? ls.stdout.split('\t')[0]?.trim() : ''
    if (!theirs || theirs === next) return
    const scratch = `refs/helix/pr-seen/${bead}`
    if ((await g(['fetch', '-q', '--no-tags', o.remote, `+refs/heads/${branch}:${scratch}`])).code !== 0) return
    try {
      if ((await g(['diff', '--quiet', scratch, next, '--', '.', `:(exclude)${o.trackerRel}`])).code === 0) return
      const taken = new Set((await g(['ls-remote', o.remote, `refs/helix/preserved/${bead}/*`])).stdout.split('\n').map((l) => l.split('\t')[1]?.trim()))
      let n = 1
      while (taken.has(preservedRefName(bead, n)) || (await g(['rev-parse', '--verify', '-q', preservedRefName(bead, n)])).code === 0) n++
      const ref = preservedRefName(bead, n)
      await g(['update-ref', ref, scratch])
      const kept = await plain.push([`--force-with-lease=${ref}:`, o.remote, `${ref}:${ref}`], false)
      if (kept.ok) o.log(`helix: ${sanitize(branch)} held another attempt's work (its host stopped before its pull request opened): kept at ${ref}`)
    } finally {
      await g(['update-ref', '-d', scratch])
    }
  }

  let tree: string | null = null
  async function emptyTree(): Promise<string> {
    tree ??= (await g(['hash-object', '-t', 'tree', '-w', '/dev/null'])).stdout.trim()
    return tree
  }

  return {
    ...o.inner,
    verifyRepair: copy.verifyRepair,
    // rounds spent (SPEC 20.4): the rebase is aborted before the work is preserved
    async preserve(ws, reason) {
      copy.forget(ws)
      const top = wtTop(ws)
      // the agent's copy first (kept beside the attempt): git cannot abort a rebase over a file it must not see
      if (existsSync(top)) {
        await takeTrackerCopy(top)
        await g(['rebase', '--abort'], top)
      }
      return o.inner.preserve(ws, reason)
    },
    commitsOf: copy.commitsOf,
    async land(ws, opts) {
      const signal = opts?.signal
      let r: LandResult | Fail
      // SPEC 19.4/20.1: a remote or forge that does not answer is nobody's fault: the finished attempt keeps
      // its claim (renewed meanwhile; won back if its lease ran out and nobody took it over) and its worktree,
      // and tries again with backoff until it answers or the run stops (a signal; --max-offline: the fleet's
      // for the remote, ours for the forge)
      let away = 0
      let forgeSince: number | null = null
      for (;;) {
        try {
          r = await serial(() => open(ws, opts ?? {}, opts?.repair === true))
        } catch (error) {
          r = {landed: false, reason: sanitize(errorMessage(error).replace(/^helix: /, '')), preservedRef: null}
        }
        const gone = 'away' in r ? r.away : undefined
        if (!gone || r.landed) break
        // a claim that ran out meanwhile is won back, or found taken over, at the next try (open)
        if (!fleet.held.get(ws.bead)) {
          r = {landed: false, reason: `the claim on ${ws.bead} was released while ${gone.what === 'forge' ? sanitize(o.forge.name) : `the remote ${o.remote}`} could not be reached`, preservedRef: null}
          break
        }
        const who = gone.what === 'forge' ? sanitize(o.forge.name) : `the remote ${sanitize(o.remote)}`
        if (gone.what === 'remote') {
          forgeSince = null
          fleet.unreachable(gone.message)
        } else {
          forgeSince ??= o.now().getTime()
          if (o.now().getTime() - forgeSince > o.maxOfflineSec * 1000) {
            r = {...r, away: undefined, unavailable: true, refused: `${who} could not be reached for more than ${o.maxOfflineSec}s (--max-offline): ${r.reason}`, fix: `check the network and the forge ('${sanitize(o.forge.name)} auth status' tries it), then run helix again`}
            break
          }
        }
        if (away++ === 0) (o.notice ?? o.log)(`helix: ${sanitize(ws.bead)}'s pull request waits until ${who} answers (${sanitize(r.reason)}); its claim and worktree are kept`)
        await abortableSleep(awayWaitMs(away), signal)
        if (signal?.aborted) {
          r = {landed: false, reason: 'interrupted', preservedRef: null}
          break
        }
      }
      passed.delete(wtTop(ws))
      if (r.landed || ('repair' in r && r.repair)) return r
      if ('refused' in r && r.refused) {
        // SPEC 20.1: not the bead's: kept, not counted, no note; the run stops with the words and the fix
        const ref = await o.inner.preserve(ws, r.reason, {uncounted: true})
        return {landed: false, reason: r.reason, preservedRef: ref, refused: `helix: ${r.refused}; ${keptWords(ws.bead, ref)}. To go on, ${('fix' in r && r.fix) || 'see the words above'}`, ...('unavailable' in r && r.unavailable ? {unavailable: true as const} : {})}
      }
      const tail = 'checkTail' in r && r.checkTail ? {checkTail: r.checkTail} : {}
      return {landed: false, reason: r.reason, preservedRef: await o.inner.preserve(ws, r.reason), ...tail}
    },
  }
}
