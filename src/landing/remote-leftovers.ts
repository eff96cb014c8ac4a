/**
 * SPEC 20.2: a `--remote` run's leftover attempts (a run killed before its landing
 * push), judged against the remote at the next start, before the first claim.
 *
 * - closed in the worktree's own tracker and the claim ref is still the one the
 *   attempt's run made (host and run match its record, whether or not it expired,
 *   as long as nobody took it over): finish it — the claim is taken over by a
 *   renewal expecting its value, and the loop runs gate, review and landing; the
 *   agent does not run again;
 * - the claim was taken over, or the bead is closed at the remote tip: the work
 *   goes to a pushed preserved ref, worktree and branch go, nothing else changes;
 * - otherwise: preserved (pushed), the attempt counted on the base, claim released.
 */
import {existsSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import path from 'node:path'
import {attemptTrackerFile, removeAttemptMeta, writeAttemptMeta} from '../git/attempt-meta.js'
import {scanAttempts, type LeftoverAttempt} from '../git/leftovers.js'
import {worktreeRel} from '../git/names.js'
import {planRemoteLeftover, type ReconcileAction, type RemoteFacts} from '../recovery/reconcile-plan.js'
import type {RemoteClaim} from '../remote/claim-refs.js'
import {parseTracker} from '../tracker/codec.js'
import {sanitize} from '../util/sanitize.js'
import type {LoopLanding, Workspace} from '../loop/ports.js'
import type {Fleet} from '../remote/fleet.js'

export interface RemoteLeftoverDeps {
  root: string
  prefix: string
  remote: string
  trackerRel: string
  fleet: Fleet
  local: LoopLanding
  /** the worktree's tracker copy taken back (file restored to HEAD), as at a landing */
  takeTrackerCopy(top: string): Promise<string>
  pushPreserved(ref: string): Promise<void>
  log(line: string): void
}

type LeftoverPort = Required<Pick<LoopLanding, 'leftovers' | 'planLeftovers' | 'adopt' | 'discard' | 'preserveLeftover'>>

const key = (l: Pick<LeftoverAttempt, 'bead' | 'attempt'>) => `${l.bead}-${l.attempt}`

/** whose the claim ref is, as the attempt's record (host, run, claim sha) sees it */
export function claimSide(l: LeftoverAttempt, c: RemoteClaim | undefined): RemoteFacts['claim'] {
  if (!c) return 'none'
  const m = l.meta
  if (m && typeof m.claim_sha === 'string' && m.claim_sha === c.sha) return 'ours'
  if (m && c.message && c.message.host === m.host && (c.message.run === m.run || (Array.isArray(m.runs) && m.runs.includes(c.message.run)))) return 'ours'
  return 'taken'
}

export function createRemoteLeftovers(d: RemoteLeftoverDeps): LeftoverPort {
  const {fleet} = d
  const rb = fleet.rb
  const wtTop = (l: Pick<LeftoverAttempt, 'bead' | 'attempt'>) => path.join(d.root, worktreeRel(l.bead, l.attempt))
  /** what the last plan found, by `<id>-<n>` */
  const judged = new Map<string, {act: ReconcileAction; claim: RemoteClaim | undefined}>()

  async function closedIn(l: LeftoverAttempt): Promise<boolean> {
    // the copy a landing saved before it put the worktree's file back, else the worktree's own
    const saved = attemptTrackerFile(d.root, l.bead, l.attempt)
    const file = existsSync(saved) ? saved : path.join(wtTop(l), d.trackerRel)
    if (!existsSync(file)) return false
    try {
      return parseTracker(await readFile(file, 'utf8'), 'attempt').byId.get(l.bead)?.status === 'closed'
    } catch {
      return false
    }
  }

  async function leftovers(): Promise<LeftoverAttempt[]> {
    await rb.fetch()
    return scanAttempts(d.root, rb.repo.env, rb.trackingRef)
  }

  async function planLeftovers(items: LeftoverAttempt[]): Promise<ReconcileAction[]> {
    const tip = (await rb.fetch()) ?? (await rb.tip())
    const atTip = parseTracker(tip ? await rb.trackerAt(tip) : '', 'tip')
    const claims = (await fleet.claims.list()) ?? []
    judged.clear()
    const out: ReconcileAction[] = []
    for (const l of items) {
      const c = claims.find((x) => x.bead === l.bead)
      const b = atTip.byId.get(l.bead)
      const facts: RemoteFacts = {closedInWorktree: await closedIn(l), closedAtTip: !b || b.status === 'closed', claim: claimSide(l, c)}
      const act = planRemoteLeftover(l, facts)
      // every attempt to finish has its claim taken back now, renewed by the fleet from here on: the
      // attempts finished before it (a land check, a resolve: minutes each) must not let it expire and
      // pass to another host. The attempt's record adds this run first (`runs`), so a kill before it
      // lands, even right after the renewal, leaves it this host's to finish at the next start
      if (act.kind === 'finish' && c) {
        if (l.meta) {
          const runs = Array.isArray(l.meta.runs) ? l.meta.runs.filter((r): r is string => typeof r === 'string') : []
          l.meta = {...l.meta, runs: [...runs, fleet.runId]}
          await writeAttemptMeta(d.root, l.meta)
        }
        await fleet.adopt(l.bead, c.sha, l.attempt, typeof l.meta?.claim_token === 'string' ? l.meta.claim_token : '', null)
      }
      judged.set(key(l), {act, claim: c})
      out.push(act)
    }
    return out
  }

  async function adopt(l: LeftoverAttempt, slot: number): Promise<Workspace | null> {
    const j = judged.get(key(l))
    if (!j?.claim || j.act.kind !== 'finish') return null
    // a resolve's stopped rebase with the agent's tracker copy put back (SPEC 20.4): the copy is
    // kept beside the attempt first, or git could not abort the rebase over it
    if (existsSync(wtTop(l))) await d.takeTrackerCopy(wtTop(l)).catch(() => '')
    const ws = await d.local.adopt?.(l, slot)
    if (!ws) return null
    const top = wtTop(l)
    const full: Workspace = {...ws, trackerDir: path.dirname(path.join(top, d.trackerRel)), ...(typeof l.meta?.base_tip === 'string' ? {baseTip: l.meta.base_tip} : {})}
    const token = typeof l.meta?.claim_token === 'string' ? l.meta.claim_token : ''
    if (!(await fleet.adopt(l.bead, j.claim.sha, l.attempt, token, full))) {
      d.log(`helix: the claim on ${sanitize(l.bead)} changed on ${sanitize(d.remote)} meanwhile; keeping attempt ${l.attempt} instead of landing it`)
      judged.set(key(l), {act: {...j.act, kind: 'drop', why: 'its claim changed meanwhile'}, claim: j.claim})
      return null
    }
    return full
  }

  async function releaseIfOurs(l: LeftoverAttempt): Promise<void> {
    const j = judged.get(key(l))
    if (j?.claim && claimSide(l, j.claim) === 'ours') {
      const r = await fleet.claims.release(l.bead, j.claim.sha)
      if (!r.ok && r.why === 'unreachable') d.log(`helix: could not release the claim on ${sanitize(l.bead)} (the remote ${sanitize(d.remote)} is unreachable); it expires with its lease`)
    }
  }

  async function discard(l: LeftoverAttempt): Promise<void> {
    if (existsSync(wtTop(l))) await d.takeTrackerCopy(wtTop(l)).catch(() => '')
    await d.local.discard?.(l)
    await removeAttemptMeta(d.root, l.bead, l.attempt)
    const j = judged.get(key(l))
    if (j && j.act.kind === 'discard' && !j.act.why?.startsWith('another')) await releaseIfOurs(l)
  }

  async function preserveLeftover(l: LeftoverAttempt): Promise<string | null> {
    if (existsSync(wtTop(l))) await d.takeTrackerCopy(wtTop(l)).catch(() => '')
    const ref = (await d.local.preserveLeftover?.(l)) ?? null
    if (ref?.startsWith('refs/helix/preserved/')) await d.pushPreserved(ref)
    await removeAttemptMeta(d.root, l.bead, l.attempt)
    const j = judged.get(key(l))
    // drop: another run holds the bead, or it is closed at the tip: nothing else is ours to change
    if (j?.act.kind === 'drop') return ref
    // SPEC 19.2 step 6: counted on the base (one commit), then the claim goes
    await fleet.endAttempt(l.bead, {reason: 'left by a run that ended', count: true})
    await releaseIfOurs(l)
    return ref
  }

  return {leftovers, planLeftovers, adopt, discard, preserveLeftover}
}
