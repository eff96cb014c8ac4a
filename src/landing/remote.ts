/**
 * `LoopLanding` for `helix run --remote` (SPEC 19.2): worktrees from the fetched
 * remote base tip, the claim written into the worktree's own tracker copy before
 * dispatch, and landing as ONE atomic push — the fast-forward of the remote base
 * together with the deletion of our claim ref at our value. A taken-over claim
 * means nothing lands; a lost race means fetch, rebase, retry (SPEC 20.1, no
 * bound), until the run's stop. With `--land-check` every candidate is checked on
 * the tip it will fast-forward before the push (SPEC 20.3); after three rounds of
 * "the base moved meanwhile" the check runs under the cross-host land lock
 * (`src/remote/land-lock.ts`). Preserved work is kept locally (the local landing's
 * `preserve`) and pushed. Never a forced push, never a rewrite of the base.
 */
import {existsSync, realpathSync} from 'node:fs'
import {mkdir, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {firstLine} from '../git/run.js'
import {saysUnreachable} from '../git/repo.js'
import {assertAttempt, assertSafeId, branchName, preservedRefName, worktreeRel} from '../git/names.js'
import {claimRef} from '../remote/claim-refs.js'
import {writeAttemptMeta} from '../git/attempt-meta.js'
import {createRemoteLeftovers} from './remote-leftovers.js'
import {refLine} from '../remote/push.js'
import {parseTracker} from '../tracker/codec.js'
import {setFields} from '../tracker/ops.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {notLandedNote} from '../loop/not-landed.js'
import type {LandOptions, LandResult, LoopLanding, Repair, Workspace} from '../loop/ports.js'
import {abortableSleep} from '../util/abort.js'
import type {RemoteLandLock} from '../remote/land-lock.js'
import {checkCandidate, writeCheckLog, type LandCheckSpec} from './land-check.js'
import {candidateAfter, candidateBefore} from './check-guard.js'
import {createAttemptCopy} from './attempt-copy.js'
import {keptWords, refusedWords} from './preserve-work.js'
import type {Fleet} from '../remote/fleet.js'

/** SPEC 20.3: rounds of "checked, but the base moved" before the check runs under the land lock */
export const CHECK_ROUNDS_OUTSIDE_LOCK = 3

/**
 * SPEC 20.1 retries a lost race without a bound, but a refusal that only reads like one
 * (a stale lock file on the remote, a hook's words) never goes away: the same answer
 * this many rounds in a row while the remote base does not move ends the landing.
 */
export const STUCK_RACE_ROUNDS = 20

/** the reason of a landing whose push kept being refused the same race-like way, quoting git */
export function stuckReason(remote: string, base: string, rounds: number, said: string): string {
  return `the push to ${sanitize(remote)} was refused ${rounds} times in a row the same way while ${sanitize(base)} there did not move (git: ${sanitize(said).slice(0, 200)})`
}

export interface RemoteLandingOptions {
  root: string
  /** the repository top and the root's prefix inside it */
  top: string
  prefix: string
  remote: string
  base: string
  trackerRel: string
  scratch: string
  host: string
  pid: number
  fleet: Fleet
  /** the local landing: base name, excludes, preserve, keepBranch, local preserved refs */
  local: LoopLanding
  now: () => Date
  log: (line: string) => void
  /** a line for the summary too (a finished attempt waiting for the remote); default: log */
  notice?: (line: string) => void
  /** told of each lost race of a landing (the session log) */
  onRace?: (bead: string, round: number, message: string) => void
  /** SPEC 20.3 `--land-check`: the team's check, run on every candidate before the push */
  landCheck?: LandCheckSpec
  /** SPEC 20.3: the cross-host lock of a candidate's last check round (set with `landCheck`) */
  landLock?: RemoteLandLock
  /** same race-like refusal, base not moving: rounds before not landed (default STUCK_RACE_ROUNDS) */
  stuckRaceRounds?: number
}

/** a lost race waits a random while before the next round, growing to about 2 s; a stop ends the wait */
const jitter = (round: number, signal?: AbortSignal): Promise<void> => abortableSleep(Math.floor(Math.random() * Math.min(2000, 50 * 2 ** Math.min(round, 6))), signal)

/** the reason of a landing that the run's stop ended (not counted across the fleet) */
const STOPPED = 'interrupted'
/** the wait before the n-th try (from 1) of a landing whose remote or forge does not answer: 0.5, 1, 2, 4, then every 5 s (a fetch each) */
export const awayWaitMs = (n: number): number => Math.min(500 * 2 ** Math.min(n - 1, 4), 5_000)

/** the reason line of an unreachable remote quotes git's own message (sanitized) */
export function unreachableReason(remote: string, message: string | null): string {
  return `the remote ${sanitize(remote)} is unreachable${message ? ` (git: ${sanitize(message).slice(0, 200)})` : ''}`
}
/** ends that are not the bead's failure: not counted across the fleet */
const NOT_COUNTED = /^(stopped|interrupted|quota pause|review stopped the run|queue drift|decomposed)$/

export function createRemoteLanding(o: RemoteLandingOptions): LoopLanding {
  const {fleet} = o
  const rb = fleet.rb
  const g = (args: string[], cwd = o.root, extra: NodeJS.ProcessEnv = {}) => rb.git(args, cwd, extra)
  const copy = createAttemptCopy({root: o.root, trackerRel: o.trackerRel, scratch: o.scratch, repo: rb.repo, run: (args, cwd) => g(args, cwd), trackerAt: (c) => rb.trackerAt(c)})
  const {wtTop, fileIn: trackerFileIn, takeTrackerCopy, mergedTracker, removeWorktree} = copy
  let chain: Promise<unknown> = Promise.resolve()
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const p = chain.then(fn, fn)
    chain = p.catch(() => {})
    return p
  }

  const exists = async (ref: string): Promise<boolean> => (await rb.repo.revParse(ref)) !== null

  async function prepare(bead: string, attempt: number, slot: number, meta?: Record<string, unknown>): Promise<Workspace> {
    assertSafeId(bead)
    assertAttempt(attempt)
    await o.local.ensureExcludes()
    const h = fleet.held.get(bead)
    if (!h) throw new Error(`no claim held on ${bead}`)
    const tip = (await rb.tip()) ?? (await rb.fetch())
    if (!tip) throw new Error(`the remote ${o.remote} has no ${o.base} yet`)
    let n = attempt
    while (existsSync(wtTop({bead, attempt: n})) || (await exists(`refs/heads/${branchName(bead, n)}`)) || (await exists(preservedRefName(bead, n)))) n++
    const top = wtTop({bead, attempt: n})
    await mkdir(path.dirname(top), {recursive: true})
    const branch = branchName(bead, n)
    const add = await g(['worktree', 'add', '-q', '-b', branch, top, tip])
    if (add.code !== 0) throw new Error(`git worktree add for ${bead} attempt ${n} failed: ${sanitize(firstLine(add))}`)
    const trackerDir = path.dirname(trackerFileIn(top))
    const ws: Workspace = {slot, bead, attempt: n, dir: path.resolve(top, o.prefix || '.'), branch, baseTip: tip, trackerDir}
    // the claim in the worktree's copy, so the agent's fenced close works as on one host (13.3);
    // skip-worktree keeps that copy out of the agent's `git add -A` (it travels by landing, 19.2)
    const now = o.now().toISOString()
    const p = {root: top, dir: trackerDir, file: trackerFileIn(top), lockDir: path.join(trackerDir, 'beads.lock'), pidFile: '', runState: '', logDir: '', contextFile: ''}
    await setFields(p, bead, {status: 'in_progress', owner: o.host, 'claimed-at': now, 'claimed-pid': o.pid, 'claimed-machine': o.host, 'claim-token': h.token})
    await g(['update-index', '--skip-worktree', '--', o.trackerRel], top)
    // SPEC 20.2: what the next start needs to judge this attempt against the remote
    await writeAttemptMeta(o.root, {...(meta ?? {}), bead, attempt: n, branch, base_tip: tip, started_at: now, remote: o.remote, host: o.host, run: fleet.runId, claim_sha: h.sha, claim_token: h.token})
    h.ws = ws
    return ws
  }

  type Failed = {landed: false; reason: string; preservedRef: null; agentText?: string; checkTail?: string[]; repair?: undefined; refused?: string}
  let projectReal: string | null = null

  async function attemptLand(ws: Workspace, lo: LandOptions): Promise<LandResult | Failed> {
    const lock = {held: null as Awaited<ReturnType<RemoteLandLock['acquire']>> | null}
    try {
      return await rounds(ws, lo, lock)
    } finally {
      if (lock.held?.ok) await o.landLock?.release(lock.held.lock)
    }
  }

  async function rounds(ws: Workspace, lo: LandOptions, lock: {held: Awaited<ReturnType<RemoteLandLock['acquire']>> | null}): Promise<LandResult | Failed> {
    const top = wtTop(ws)
    const h = fleet.held.get(ws.bead)
    const signal = lo.signal ?? o.landCheck?.signal
    if (!existsSync(top)) return {landed: false, reason: `the worktree ${worktreeRel(ws.bead, ws.attempt)} is gone`, preservedRef: null}
    const agentText = await takeTrackerCopy(top)
    const fail = (reason: string, checkTail?: string[]): Failed => ({landed: false as const, reason, preservedRef: null, agentText, ...(checkTail ? {checkTail} : {})})
    if (!h || h.lost) return fail(`the claim on ${ws.bead} was lost (its lease expired or another host took it over)`)
    const held = h
    const left = await copy.commitLeftovers(ws)
    if (left.kind === 'refused') return fail(refusedWords(left, 'the work left uncommitted'))
    // SPEC 19.4/20.1: a remote that does not answer is nobody's fault: the finished attempt keeps
    // its claim (renewed meanwhile) and its worktree, and tries again with backoff until the remote
    // answers, the lease runs out unrenewed, or the run stops (a signal, --max-offline: the fleet's).
    // Only git's words for a failed transport wait; any other failure ends the landing as before.
    let away = 0
    let expiredSaid = false
    const say = o.notice ?? o.log
    const awaitRemote = async (message: string | null, transport = saysUnreachable(message)): Promise<Failed | null> => {
      fleet.unreachable(message)
      if (!transport) return fail(unreachableReason(o.remote, message))
      if (away++ === 0) say(`helix: ${sanitize(ws.bead)} waits to land until the remote ${sanitize(o.remote)} answers; its claim and worktree are kept`)
      await abortableSleep(awayWaitMs(away), signal)
      if (signal?.aborted) return fail(STOPPED)
      // a lease that ran out here is not one lost to another host (20.1): the push below expects our
      // claim's value, so the work lands only if nobody took the bead over meanwhile (as 20.2 after a restart)
      if (held.lost && !expiredSaid) {
        expiredSaid = true
        say(`helix: ${sanitize(ws.bead)}'s claim ran out while the remote ${sanitize(o.remote)} is unreachable; it still lands when the remote answers unless another host has taken ${sanitize(ws.bead)} over`)
      }
      return null
    }
    // SPEC 20.4: what the loop sends back to the agent; the worktree stays as it is, with the agent's tracker copy back in place
    const needsRepair = async (reason: string, repair: Repair): Promise<LandResult> => {
      await copy.putTrackerCopy(ws, agentText)
      return {landed: false, reason, preservedRef: null, repair}
    }
    // a push refused the same race-like way while the base stays where it is: not a race after all
    const stuck = {key: '', tip: '', rounds: 0}
    // while the base moves: a tracker conflict is resolved by bead id below, so git keeps ours during the rebase
    const attrs = path.join(o.scratch, 'attributes')
    await mkdir(o.scratch, {recursive: true})
    await writeFile(attrs, `${o.trackerRel} merge=helix-keep\n`)
    const deferredEdits = fleet.deferredOf(ws.bead)
    // SPEC 20.3: the candidate last checked (the rebased HEAD) and how many times it had to be checked again
    let checked: string | null = null
    let checks = 0
    // SPEC 20.1: a push lost to another host's landing is a race: fetch, rebase, retry with
    // jitter, without a bound, while the claim is ours (renewed meanwhile) and the run is not stopping
    for (let round = 0; ; round++) {
      if (signal?.aborted) return fail(STOPPED)
      if (round > 0) await jitter(round, signal)
      if (signal?.aborted) return fail(STOPPED)
      const tip = await rb.fetch()
      if (!tip) {
        const gone = await awaitRemote(rb.lastFailure())
        if (gone) return gone
        continue
      }
      // the remote answers this landing: the fleet need not wait for its own next look to know it
      if (fleet.offline()) void fleet.online().catch(() => {})
      // the lease ran out while the remote was away (or the claim was taken over): the claim is ours again
      // only if it is still our value there, by a renewal expecting it, before any rebase onto their work
      if (held.lost) {
        const r = await fleet.claims.renew(ws.bead, held.sha, held.attempt)
        if (!r.ok && r.why === 'unreachable') {
          const gone = await awaitRemote(r.message)
          if (gone) return gone
          continue
        }
        if (!r.ok) return fail(`the claim on ${ws.bead} was taken over by another host${expiredSaid ? ` while the remote ${o.remote} was unreachable` : ''}; nothing landed`)
        Object.assign(held, {sha: r.sha, expiresAt: o.now().getTime() + fleet.claims.leaseMs, lost: false})
        say(`helix: ${sanitize(ws.bead)}'s claim is this run's again (nobody took it over); landing`)
      }
      if (!(await rb.repo.isAncestor(tip, 'HEAD', top))) {
        const rebase = await g(['-c', `core.attributesFile=${attrs}`, '-c', 'merge.helix-keep.driver=true', '-c', 'merge.helix-beads.driver=true', 'rebase', '-q', '--no-autostash', tip], top)
        if (rebase.code !== 0) {
          const files = (await g(['diff', '--name-only', '--diff-filter=U'], top)).stdout.split('\n').filter(Boolean)
          const why = files.length ? `conflict in ${sanitize(files.slice(0, 5).join(', '))}` : `rebase failed: ${sanitize(firstLine(rebase))}`
          // the tracker never stops the rebase (git keeps ours; it is merged by bead id below)
          if (lo.repair && files.length > 0) return needsRepair(why, {kind: 'conflict', onto: tip, paths: files})
          await g(['rebase', '--abort'], top)
          return fail(why)
        }
      }
      const head = (await rb.repo.revParse('HEAD', top)) ?? ''
      if (o.landCheck && head !== checked) {
        // after 3 rounds of "the base moved meanwhile", this host checks and pushes under the land lock
        if (checks >= CHECK_ROUNDS_OUTSIDE_LOCK && !lock.held?.ok && o.landLock) {
          lock.held = await o.landLock.acquire(signal)
          if (!lock.held.ok) {
            if (lock.held.why === 'aborted') return fail(STOPPED)
            const gone = await awaitRemote(lock.held.message, true)
            if (gone) return gone
          }
          continue
        }
        checks++
        projectReal ??= realpathSync(o.root)
        const before = await candidateBefore(g, top)
        const c = await checkCandidate(o.landCheck, ws.dir, {bead: ws.bead, attempt: lo.attemptNo ?? ws.attempt, onto: tip, project: projectReal}, lo.onCheck)
        // what lands is the candidate the check ran on: a check that commits or resets would otherwise be checked again for ever
        const moved = await candidateAfter(g, top, before)
        if (signal?.aborted) return fail(STOPPED)
        if (moved) return fail(moved, c.run.tail)
        if (!c.passed) {
          if (lo.repair) return needsRepair(c.reason, {kind: 'check', onto: tip, rc: c.run.rc, tail: c.run.tail, logFile: await writeCheckLog(ws.dir, c.run.output)})
          return fail(c.reason, c.run.tail)
        }
        checked = head
        // the check took a while: look at the base again before pushing
        continue
      }
      // another host holds the land lock for its last round: let it land first
      if (o.landCheck && o.landLock && !lock.held?.ok && (await o.landLock.heldByOther())) {
        await abortableSleep(300 + Math.floor(Math.random() * 700), signal)
        continue
      }
      const text = await mergedTracker(ws, agentText, head, deferredEdits)
      const next = text === (await rb.trackerAt(head)) ? head : await rb.trackerCommit(head, text, `helix(${o.host}): tracker of ${ws.bead} (attempt ${ws.attempt})`)
      // a claim lost meanwhile (expired, or taken over) is judged by the push itself: it expects our value
      h.landing = true
      if (h.renewing) await h.renewing
      const ref = claimRef(ws.bead)
      const p = await rb.push(['--atomic', `--force-with-lease=${ref}:${h.sha}`, o.remote, `${next}:refs/heads/${o.base}`, `:${ref}`])
      if (p.ok) {
        fleet.held.delete(ws.bead)
        fleet.landed(ws.bead)
        await rb.setTracking(next)
        const commits = (await g(['rev-list', '--reverse', `${tip}..${next}`])).stdout.split('\n').filter(Boolean)
        await rb.fastForwardLocal()
        await removeWorktree(ws)
        return {landed: true, sha: next, commits}
      }
      h.landing = false
      if (p.kind === 'unreachable') {
        const gone = await awaitRemote(p.message)
        if (gone) return gone
        continue
      }
      const claimLine = refLine(p, ref)
      if (claimLine && /stale info/.test(claimLine.summary)) {
        h.lost = true
        return fail(`the claim on ${ws.bead} was taken over by another host; nothing landed`)
      }
      // the remote's own rule (a pre-receive hook, a protected base) refuses it: nothing of the bead's,
      // and every landing would meet it: the run stops with the remote's words (decisions.md, session 32)
      if (p.kind === 'rejected') return {...fail(`the remote ${o.remote} refused the push to ${o.base}`), refused: sanitize(p.message)}
      if (p.kind !== 'race') return fail(`the push was refused: ${sanitize(refLine(p, `refs/heads/${o.base}`)?.summary ?? p.message)}`)
      o.onRace?.(ws.bead, round + 1, p.message)
      const said = p.detail ?? p.message
      stuck.rounds = said === stuck.key && tip === stuck.tip ? stuck.rounds + 1 : 1
      stuck.key = said
      stuck.tip = tip
      if (stuck.rounds >= (o.stuckRaceRounds ?? STUCK_RACE_ROUNDS)) return fail(stuckReason(o.remote, o.base, stuck.rounds, said))
    }
  }

  async function pushPreserved(ref: string): Promise<void> {
    await fleet.later(`push of ${ref}`, async () => {
      const p = await rb.push([`--force-with-lease=${ref}:`, o.remote, `${ref}:${ref}`])
      if (!p.ok && p.kind === 'unreachable') return 'unreachable'
      if (!p.ok) o.log(`helix: ${ref} exists on ${sanitize(o.remote)} already (another host's attempt); kept locally`)
      return 'done'
    })
  }

  /** the agent closed its bead in the worktree's copy (the loop then reopens it with a NOT LANDED note) */
  function closedIn(text: string, bead: string): boolean {
    try {
      return parseTracker(text, 'attempt').byId.get(bead)?.status === 'closed'
    } catch {
      return false
    }
  }

  async function preserve(ws: Workspace, reason: string, agentText?: string, books = true): Promise<string | null> {
    const top = wtTop(ws)
    copy.forget(ws)
    const text = existsSync(top) ? await takeTrackerCopy(top).catch(() => '') : (agentText ?? '')
    const ref = await o.local.preserve(ws, reason)
    if (ref?.startsWith('refs/helix/preserved/')) await pushPreserved(ref)
    // counted before the claim goes, so no host picks the bead up before its backoff is on the base;
    // a lost claim is no longer ours to count: the run that holds it now keeps the bead's books.
    // The count, the attempt's spend and the NOT LANDED note are one commit (SPEC 20.1)
    const h = fleet.held.get(ws.bead)
    if (books && h && !h.lost) {
      const note = closedIn(agentText ?? text, ws.bead) ? notLandedNote(o.now(), reason, ref) : null
      // a base that refuses even the bookkeeping (the landing's own trouble) still gets the claim released below
      await fleet.endAttempt(ws.bead, {reason, count: !NOT_COUNTED.test(reason), note}).catch((error: unknown) => o.log(`helix: the bookkeeping of ${sanitize(ws.bead)} was not written: ${sanitize(errorMessage(error))}`))
    }
    await fleet.release(ws.bead)
    return ref
  }

  async function land(ws: Workspace, lo: LandOptions = {}): Promise<LandResult> {
    let r: Awaited<ReturnType<typeof attemptLand>>
    try {
      r = await serial(() => attemptLand(ws, lo))
    } catch (error) {
      r = {landed: false, reason: sanitize(errorMessage(error).replace(/^helix: /, '')), preservedRef: null}
    }
    // SPEC 20.4: the worktree stays as it is for the resolve; the claim stays ours (renewed meanwhile)
    if (r.landed || r.repair) return r
    const tail = 'checkTail' in r && r.checkTail ? {checkTail: r.checkTail} : {}
    if ('refused' in r && r.refused) {
      // not counted, no note: the base takes no bookkeeping either; the claim goes, the work is kept
      const ref = await preserve(ws, r.reason, 'agentText' in r ? r.agentText : undefined, false)
      const refused = `helix: the remote ${sanitize(o.remote)} refuses helix's push to ${sanitize(o.base)} (${r.refused}); ${keptWords(ws.bead, ref)}. A base that merges only through review lands with --land pr; else let helix push to ${sanitize(o.base)}`
      return {landed: false, reason: r.reason, preservedRef: ref, refused}
    }
    return {landed: false, reason: r.reason, preservedRef: await preserve(ws, r.reason, 'agentText' in r ? r.agentText : undefined), ...tail}
  }

  async function preservedRef(bead: string): Promise<string | null> {
    // another host's preserved work on this bead: fetch what is new (never overwrite a local ref)
    if (!fleet.offline()) await rb.repo.fetch([o.remote, `refs/helix/preserved/${bead}/*:refs/helix/preserved/${bead}/*`]).catch(() => null)
    return o.local.preservedRef(bead)
  }

  const left = createRemoteLeftovers({root: o.root, prefix: o.prefix, remote: o.remote, trackerRel: o.trackerRel, fleet, local: o.local, takeTrackerCopy, pushPreserved, log: o.log})

  return {
    ...left,
    remote: o.remote,
    base: o.local.base,
    ensureExcludes: o.local.ensureExcludes,
    prepare,
    land,
    verifyRepair: copy.verifyRepair,
    commitsOf: copy.commitsOf,
    preserve: (ws, reason, opts) => preserve(ws, reason, undefined, opts?.uncounted !== true),
    keepBranch: o.local.keepBranch,
    preservedRef,
  }
}
