/**
 * `helix run --remote <name>` (SPEC 19): the run's tracker port over the remote's
 * base branch, and the claims this host holds as lease refs. Plugged into the
 * unchanged loop through `LoopTracker`; `landing/remote.ts` is the matching
 * `LoopLanding`.
 *
 * - read: fetch (at most every 500 ms), the tracker at the fetched base tip; a bead
 *   with a live claim ref of another run reads as in_progress (so selection skips
 *   it); a bead this host is working reads from the attempt's worktree copy.
 * - claim: create the claim ref (or take over an expired one, or one of this host
 *   whose run is dead); tracker writes are commits pushed to the base.
 * - renewal every lease/3, retried with backoff while the remote is away; a lease
 *   that ends unrenewed stops its attempt (`onLost`), which is then not landed.
 * - offline: no new claims; tracker commits and pushes wait in order and go out
 *   when the remote answers again; past --max-offline `onMaxOffline` fires once.
 */
import {randomBytes} from 'node:crypto'
import {parseTracker} from '../tracker/codec.js'
import {readTracker} from '../tracker/store.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {sanitize} from '../util/sanitize.js'
import {hhmmss} from '../util/time.js'
import {claimState, createClaims, skewMs, type RemoteClaim} from './claim-refs.js'
import {createRemoteBase} from './base.js'
import type {ClaimResult, Waiting} from '../loop/ports.js'
import type {Fleet, FleetOptions, Held} from './fleet-types.js'
export type {Fleet, FleetOptions, Held} from './fleet-types.js'

import {createRemoteTracker, RETRY_AFTER_FIELD} from './tracker-port.js'
export {ATTEMPTS_FIELD, RETRY_AFTER_FIELD} from './tracker-port.js'

type Pending = {what: string; run: () => Promise<'done' | 'unreachable'>}


const REFRESH_MS = 500
const humanIn = (ms: number): string => (ms >= 90_000 ? `${Math.round(ms / 60_000)}m` : `${Math.max(0, Math.round(ms / 1000))}s`)

export function createFleet(o: FleetOptions): Fleet {
  const claims = createClaims({cwd: o.root, remote: o.remote, env: o.env, host: o.host, run: o.runId, pid: o.pid, leaseSec: o.leaseSec, now: o.now})
  const plain = createRemoteBase({root: o.root, remote: o.remote, base: o.base, trackerRel: o.trackerRel, env: o.env, scratch: o.scratch})
  const rb = o.wrapBase ? o.wrapBase(plain) : plain
  const held = new Map<string, Held>()
  const lostHandlers = new Map<string, () => void>()
  const pending: Pending[] = []
  const claimCount = new Map<string, number>()
  let offlineSince: number | null = null
  let exceeded = false
  let lastRefresh = 0
  let lastTip: string | null = null
  let lastClaims: RemoteClaim[] = []
  let openAtTip = new Set<string>()
  let retryAfter = new Map<string, number>()
  let timer: NodeJS.Timeout | null = null
  let closed = false
  const lease = o.leaseSec * 1000
  const skew = skewMs(o.env)

  function unreachable(message?: string | null): void {
    const t = o.now().getTime()
    if (offlineSince === null) {
      offlineSince = t
      const why = message ?? rb.lastFailure() ?? claims.lastFailure()
      o.log(`helix: the remote ${sanitize(o.remote)} is unreachable${why ? ` (git: ${sanitize(why).slice(0, 200)})` : ''}; no new claims until it answers`)
    }
    if (!exceeded && t - offlineSince > o.maxOfflineSec * 1000) {
      exceeded = true
      o.log(`helix: the remote ${sanitize(o.remote)} has been unreachable for more than ${o.maxOfflineSec}s (--max-offline); stopping`)
      o.onMaxOffline()
    }
  }

  let flushing: Promise<void> | null = null
  async function online(): Promise<void> {
    if (offlineSince !== null) o.log(`helix: the remote ${sanitize(o.remote)} answers again`)
    offlineSince = null
    if (flushing) return flushing
    flushing = (async () => {
      while (pending.length > 0) {
        const p = pending[0] as Pending
        let r: 'done' | 'unreachable'
        try {
          r = await p.run()
        } catch (error) {
          o.log(`helix: ${p.what} failed: ${sanitize(String(error))}`)
          r = 'done'
        }
        if (r === 'unreachable') {
          unreachable()
          return
        }
        pending.shift()
      }
    })().finally(() => (flushing = null))
    return flushing
  }

  async function later(what: string, run: () => Promise<'done' | 'unreachable'>): Promise<void> {
    if (pending.length === 0 && offlineSince === null) {
      const r = await run()
      if (r === 'done') return
      unreachable()
    }
    pending.push({what, run})
  }

  async function refresh(force = false): Promise<void> {
    const t = o.now().getTime()
    if (!force && t - lastRefresh < REFRESH_MS && lastTip) return
    lastRefresh = t
    const tip = await rb.fetch()
    if (!tip) {
      unreachable()
      lastTip ??= await rb.tip()
      return
    }
    lastTip = tip
    const list = await claims.list()
    if (list) setClaims(list)
    await online()
  }

  /** `refs/helix/claims/<id>/…` is no claim: it blocks `<id>`'s claim ref (a directory/file clash) */
  let strayRefs = new Map<string, string>()
  function setClaims(list: RemoteClaim[]): void {
    lastClaims = list.filter((c) => !c.bead.includes('/'))
    strayRefs = new Map()
    for (const c of list) if (c.bead.includes('/')) strayRefs.set(c.bead.slice(0, c.bead.indexOf('/')), c.ref)
  }

  const strayMessage = (id: string, ref: string): string =>
    `the ref ${sanitize(ref)} on ${sanitize(o.remote)} is in the way of its claim ref (not a claim of any host; remove it: git push ${sanitize(o.remote)} :${sanitize(ref)})`

  /** a claim that blocks us: live and not ours (an own-host claim of a dead run is not live) */
  function blocking(c: RemoteClaim, now: Date): boolean {
    if (held.get(c.bead)?.sha === c.sha) return false
    // SPEC 20.5: a bead awaiting its pull request's merge is the forge's; whoever opened it
    if (c.message?.pr_url) return true
    if (c.message && c.message.host === o.host && c.message.run !== o.runId && !o.pidAlive(c.message.pid)) return false
    return claimState(c, now, skew) !== 'takeable'
  }

  function describe(c: RemoteClaim, now: Date): string {
    const who = c.message ? sanitize(c.message.host) : 'an unreadable claim'
    return `${sanitize(c.bead)} claimed by ${who} (expires in ${humanIn(c.expiresAt.getTime() - now.getTime())})`
  }

  async function read(): Promise<TrackerSnapshot> {
    await refresh()
    // the tracking ref, not the last fetch: a landing or tracker commit of this host moved it already
    const tip = (await rb.tip()) ?? lastTip
    const snap = parseTracker(tip ? await rb.trackerAt(tip) : '', `${o.remote}/${o.base}:${o.trackerRel}`)
    const now = o.now()
    openAtTip = new Set(snap.beads.filter((b) => (b.status ?? 'open') === 'open').map((b) => b.id))
    retryAfter = new Map()
    for (const b of snap.beads) {
      const until = typeof b[RETRY_AFTER_FIELD] === 'string' ? Date.parse(b[RETRY_AFTER_FIELD] as string) : NaN
      if ((b.status ?? 'open') !== 'open' || !(until > now.getTime()) || held.has(b.id)) continue
      // backing off after a failure on some host: not selectable until then, on every host
      retryAfter.set(b.id, until)
      b.status = 'in_progress'
    }
    for (const c of lastClaims) {
      const b = snap.byId.get(c.bead)
      if (!b || (b.status ?? 'open') !== 'open' || !blocking(c, now)) continue
      b.status = 'in_progress'
      b.owner = c.message ? sanitize(c.message.host) : 'unknown'
    }
    for (const h of held.values()) {
      const b = snap.byId.get(h.bead)
      if (!b) continue
      let own: Bead | undefined
      if (h.ws) {
        const dir = h.ws.trackerDir
        try {
          if (dir) own = (await readTracker(`${dir}/beads.jsonl`)).byId.get(h.bead)
        } catch {
          own = undefined
        }
      }
      const next: Bead = own ? {...own} : {...b, status: (b.status ?? 'open') === 'open' ? 'in_progress' : b.status, owner: o.host, 'claim-token': h.token}
      const i = snap.beads.indexOf(b)
      snap.beads[i] = next
      snap.byId.set(h.bead, next)
    }
    return snap
  }

  async function claim(id: string): Promise<ClaimResult> {
    if (offlineSince !== null) return {ok: false, message: `the remote ${sanitize(o.remote)} is unreachable`}
    const list = await claims.list()
    if (!list) {
      unreachable()
      return {ok: false, message: `the remote ${sanitize(o.remote)} is unreachable`}
    }
    setClaims(list)
    const stray = strayRefs.get(id)
    if (stray) return {ok: false, blocked: true, message: strayMessage(id, stray)}
    const now = o.now()
    const existing = lastClaims.find((c) => c.bead === id)
    if (existing && blocking(existing, now)) return {ok: false, message: describe(existing, now)}
    // the base after the claim list: a host that landed this bead deleted its claim in the same push
    const tip = await rb.fetch()
    if (!tip) {
      unreachable()
      return {ok: false, message: `the remote ${sanitize(o.remote)} is unreachable`}
    }
    const atTip = parseTracker(await rb.trackerAt(tip), 'tip').byId.get(id)
    if (!atTip || (atTip.status ?? 'open') !== 'open') return {ok: false, message: `${sanitize(id)} is ${atTip ? sanitize(String(atTip.status)) : 'gone'} at the remote tip`}
    const attempt = (claimCount.get(id) ?? 0) + 1
    const r = existing ? await claims.takeOver(id, existing.sha, attempt) : await claims.create(id, attempt)
    if (!r.ok) {
      if (r.why === 'unreachable') unreachable(r.message)
      if (r.why === 'blocked')
        return {ok: false, blocked: true, message: r.blockingRef ? strayMessage(id, r.blockingRef) : `the remote ${sanitize(o.remote)} refused its claim ref: ${sanitize(r.message)}`}
      return {ok: false, message: r.why === 'lost' ? `another host claimed ${sanitize(id)} first` : `the remote ${sanitize(o.remote)} is unreachable`}
    }
    if (existing) o.log(`helix: took over the expired claim on ${sanitize(id)}${existing.message ? ` of ${sanitize(existing.message.host)}` : ''}`)
    claimCount.set(id, attempt)
    const token = randomBytes(8).toString('hex')
    const h: Held = {bead: id, sha: r.sha, attempt, token, expiresAt: now.getTime() + lease, ws: null, lost: false, landing: false, renewing: null}
    held.set(id, h)
    // SPEC 20.1: the tip was read before the claim list; a host may have landed it in between
    const again = await rb.fetch()
    const fresh = again ? parseTracker(await rb.trackerAt(again), 'tip').byId.get(id) : atTip
    if (!fresh || (fresh.status ?? 'open') !== 'open') {
      await release(id, true)
      return {ok: false, message: `${sanitize(id)} is ${fresh ? sanitize(String(fresh.status)) : 'gone'} at the remote tip (landed meanwhile)`}
    }
    return {ok: true, token}
  }

  /** release a claim we hold (compare-and-delete at our value); later when the remote is away */
  async function release(id: string, force = false): Promise<void> {
    const h = held.get(id)
    if (!h) return
    // while the attempt's worktree exists its end (preserve or landing) releases the claim, after counting it
    if (!force && h.ws) return
    // what the attempt put off (spend, notes) goes now, while the claim still holds the bead
    if (!h.lost) await endAttempt(id, {reason: '', count: false}).catch((error: unknown) => o.log(`helix: bookkeeping of ${sanitize(id)} not written: ${sanitize(String(error))}`))
    held.delete(id)
    if (h.renewing) await h.renewing
    if (h.lost) return
    await later(`release of the claim on ${sanitize(id)}`, async () => ((await claims.release(id, h.sha)).ok || !(await stillUnreachable()) ? 'done' : 'unreachable'))
  }

  async function stillUnreachable(): Promise<boolean> {
    return (await claims.list()) === null
  }

  function lose(h: Held, why: string): void {
    if (h.lost) return
    h.lost = true
    o.log(`helix: lost the claim on ${sanitize(h.bead)} (${why}); stopping its attempt`)
    lostHandlers.get(h.bead)?.()
  }

  async function renewOne(h: Held): Promise<void> {
    const r = await claims.renew(h.bead, h.sha, h.attempt)
    if (r.ok) {
      h.sha = r.sha
      h.expiresAt = o.now().getTime() + lease
      if (offlineSince !== null) void online()
      return
    }
    if (r.why === 'lost') return lose(h, 'another run took it over')
    unreachable(r.message)
    if (o.now().getTime() >= h.expiresAt) lose(h, 'its lease expired unrenewed')
  }

  let backoffMs = 1000
  async function tick(): Promise<void> {
    let failed = false
    for (const h of [...held.values()]) {
      if (h.lost || h.landing || h.renewing) continue
      // renew once a third of the lease has passed since the last renewal
      if (h.expiresAt - o.now().getTime() > (lease * 2) / 3 && offlineSince === null) continue
      h.renewing = renewOne(h).finally(() => (h.renewing = null))
      await h.renewing
      if (offlineSince !== null) failed = true
    }
    if (offlineSince !== null) {
      failed = true
      if (pending.length > 0 || held.size > 0) await refresh(true)
      else unreachable()
    }
    backoffMs = failed ? Math.min(backoffMs * 2, Math.max(1000, lease / 3)) : 1000
  }

  function schedule(): void {
    if (closed) return
    const wait = offlineSince !== null ? backoffMs : Math.max(200, Math.min(lease / 6, 5000))
    timer = setTimeout(() => {
      tick()
        .catch((error: unknown) => o.log(`helix: claim renewal failed: ${sanitize(String(error))}`))
        .finally(schedule)
    }, wait)
    timer.unref?.()
  }

  const {tracker, endAttempt, takeDeferred, peekDeferred} = createRemoteTracker({o, rb, later, read, claim, release, isHeld: (id) => held.has(id)})

  return {
    tracker,
    rb,
    claims,
    held,
    onLost(bead, fn) {
      lostHandlers.set(bead, fn)
      const h = held.get(bead)
      if (h?.lost) fn()
      return () => {
        if (lostHandlers.get(bead) === fn) lostHandlers.delete(bead)
      }
    },
    waiting() {
      const now = o.now()
      const out: Waiting[] = []
      for (const c of lastClaims) {
        // a pull request is waited for by --pr-wait (landing/pr.ts), not by its claim's lease
        if (held.has(c.bead) || !openAtTip.has(c.bead) || !blocking(c, now) || c.message?.pr_url) continue
        // look again soon: the other host may land, release, or let it expire. As often as this run
        // renews its own claims (lease/6, at most 5 s, at least 2 s): a host whose queue ends with
        // another host's beads learns that they landed within seconds (at lease/3, up to 15 s, a
        // fleet's last host sat idle that long after the last landing before its drain's check)
        const until = Math.min(c.expiresAt.getTime() + skew + 1000, now.getTime() + Math.max(2000, Math.min(lease / 6, 5000)))
        // this run's own claim, just landed, released or given its pull request (the list is a moment
        // old): the next look (a refresh is due within REFRESH_MS) sees what became of it; no words
        if (c.message?.run === o.runId) {
          out.push({until: new Date(now.getTime() + REFRESH_MS * 2).toISOString()})
          continue
        }
        const who = c.message ? `claimed by ${sanitize(c.message.host)}` : 'claimed (an unreadable claim)'
        // a live claim's end is its holder's to move (every renewal): named without a time, so the
        // words stay the same while it holds; an expired one says when it may be taken over
        const ended = claimState(c, now, skew) === 'expired' ? ` (its lease ended ${hhmmss(c.expiresAt)}; free to take over at ${hhmmss(new Date(c.expiresAt.getTime() + skew))})` : ''
        out.push({until: new Date(until).toISOString(), what: `${sanitize(c.bead)} ${who}${ended}`})
      }
      for (const [id, until] of retryAfter) out.push({until: new Date(until).toISOString(), what: `${sanitize(id)} backing off after a failure (until ${hhmmss(new Date(until))})`})
      return out.sort((a, b) => a.until.localeCompare(b.until))
    },
    release: (id) => release(id, true),
    endAttempt,
    runId: o.runId,
    host: o.host,
    async adopt(bead, theirs, attempt, token, ws) {
      // adopted already (at the start's plan, before its turn came): the claim is held and renewed
      const h = held.get(bead)
      if (h && h.attempt === attempt && h.token === token && !h.lost) {
        if (ws) h.ws = ws
        return true
      }
      const r = await claims.renew(bead, theirs, attempt)
      if (!r.ok) {
        if (r.why === 'unreachable') unreachable(r.message)
        return false
      }
      held.set(bead, {bead, sha: r.sha, attempt, token, expiresAt: o.now().getTime() + lease, ws, lost: false, landing: false, renewing: null})
      return true
    },
    deferredOf: peekDeferred,
    landed: (bead) => void takeDeferred(bead),
    strays: () => new Map(strayRefs),
    offlineExceeded: () => exceeded,
    offline: () => offlineSince !== null,
    later,
    online,
    unreachable,
    start() {
      if (!timer && !closed) schedule()
    },
    async close() {
      closed = true
      if (timer) clearTimeout(timer)
      for (const id of [...held.keys()]) await release(id, true).catch(() => {})
      if (pending.length > 0 && offlineSince === null) await online().catch(() => {})
      if (pending.length > 0) o.log(`helix: ${pending.length} remote write(s) could not reach ${sanitize(o.remote)}: ${pending.map((p) => sanitize(p.what)).join('; ')}`)
    },
  }
}
