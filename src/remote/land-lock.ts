/**
 * The cross-host land lock of SPEC 20.3: `refs/helix/land-lock` on the remote, a
 * lease ref taken by compare-and-set exactly like a claim (19.1). A candidate that
 * lost three rounds of "checked, but the base moved" takes it, checks once more
 * and pushes while holding it; the other hosts, before pushing, wait while a live
 * lock of another run is there, so the holder's candidate is not overtaken again.
 *
 *   take      `--force-with-lease=refs/helix/land-lock:`          (must not exist)
 *   renew     `--force-with-lease=refs/helix/land-lock:<ours>`    (every lease/3)
 *   release   `--force-with-lease=refs/helix/land-lock:<ours>` deleting it
 *   take over `--force-with-lease=refs/helix/land-lock:<theirs>`  once theirs expired
 *              more than the skew allowance ago (a dead host never holds it for long)
 *
 * The message is a claim object (host, run, pid, `attempt` 0, claimed_at,
 * expires_at). The lock is for progress only: the base stays green without it,
 * since every push is a fast-forward of a candidate checked on that very tip.
 */
import {firstLine} from '../git/run.js'
import type {Repo} from '../git/repo.js'
import {abortableSleep} from '../util/abort.js'
import {parseClaimMessage, type ClaimMessage} from './claim-refs.js'

export const LAND_LOCK_REF = 'refs/helix/land-lock'

export interface RemoteLandLockOptions {
  repo: Repo
  remote: string
  host: string
  run: string
  pid: number
  leaseSec: number
  /** the skew allowance before an expired lock may be taken over (ms) */
  skewMs: number
  now: () => Date
}

export interface LockHolder {
  /** the ref's value now (renewals change it) */
  sha: string
  /** false once a renewal found the ref changed (taken over): the holder goes on, unlocked */
  held: boolean
}

export type AcquireResult = {ok: true; lock: LockHolder} | {ok: false; why: 'aborted' | 'unreachable'; message: string}

export interface RemoteLandLock {
  /** takes the lock, waiting (abortably) while another live run holds it */
  acquire(signal?: AbortSignal): Promise<AcquireResult>
  /** stops the renewals and deletes the ref at our value (best effort) */
  release(lock: LockHolder): Promise<void>
  /** true when a lock of another run is on the remote and not expired */
  heldByOther(): Promise<boolean>
}

interface Current {
  sha: string
  message: ClaimMessage | null
  expiresAt: number
}

export function createRemoteLandLock(o: RemoteLandLockOptions): RemoteLandLock {
  const {repo} = o
  const leaseMs = o.leaseSec * 1000
  let emptyTree: string | null = null
  let last = ''
  const timers = new Map<LockHolder, NodeJS.Timeout>()

  async function commit(): Promise<string> {
    emptyTree ??= (await repo.run(['hash-object', '-t', 'tree', '-w', '/dev/null'])).stdout.trim()
    const now = o.now()
    let at = now.toISOString()
    // every lock commit is unique (a push of the same sha would be "up to date")
    if (at <= last) at = new Date(Date.parse(last) + 1).toISOString()
    last = at
    const msg: ClaimMessage = {host: o.host, run: o.run, pid: o.pid, attempt: 0, claimed_at: at, expires_at: new Date(Date.parse(at) + leaseMs).toISOString()}
    const r = await repo.run(['commit-tree', '-m', JSON.stringify(msg), emptyTree])
    if (r.code !== 0) throw new Error(`git commit-tree failed: ${firstLine(r)}`)
    return r.stdout.trim()
  }

  /** the lock on the remote now: null when there is none; undefined when the remote did not answer */
  async function current(): Promise<Current | null | undefined> {
    const r = await repo.run(['ls-remote', o.remote, LAND_LOCK_REF])
    if (r.code !== 0) return undefined
    const sha = r.stdout.split('\n').find((l) => l.endsWith(`\t${LAND_LOCK_REF}`))?.split('\t')[0]
    if (!sha) return null
    if ((await repo.run(['cat-file', '-e', `${sha}^{commit}`])).code !== 0) await repo.fetch(['--no-write-fetch-head', o.remote, LAND_LOCK_REF])
    const c = await repo.run(['cat-file', 'commit', sha])
    const [head = '', ...body] = c.stdout.split('\n\n')
    const ct = /^committer .* (\d+) [+-]\d{4}$/m.exec(head)
    const message = c.code === 0 ? parseClaimMessage(body.join('\n\n')) : null
    // not a lock object (or unreadable): live for one lease from its commit time, like a claim
    const expiresAt = message ? Date.parse(message.expires_at) : (ct ? Number(ct[1]) * 1000 : 0) + leaseMs
    return {sha, message, expiresAt}
  }

  async function push(expect: string, to: string | null): Promise<'ok' | 'lost' | 'unreachable'> {
    const p = await repo.push([`--force-with-lease=${LAND_LOCK_REF}:${expect}`, o.remote, to ? `${to}:${LAND_LOCK_REF}` : `:${LAND_LOCK_REF}`], {hooks: false})
    if (p.ok) return 'ok'
    return p.kind === 'unreachable' ? 'unreachable' : 'lost'
  }

  function renewEvery(lock: LockHolder): void {
    const t = setInterval(() => {
      void (async () => {
        if (!lock.held) return
        const next = await commit()
        const r = await push(lock.sha, next)
        if (r === 'ok') lock.sha = next
        else if (r === 'lost') lock.held = false
      })().catch(() => {})
    }, Math.max(1000, Math.floor(leaseMs / 3)))
    t.unref()
    timers.set(lock, t)
  }

  async function acquire(signal?: AbortSignal): Promise<AcquireResult> {
    let expect = ''
    for (let round = 0; ; round++) {
      if (signal?.aborted) return {ok: false, why: 'aborted', message: 'interrupted'}
      const sha = await commit()
      const r = await push(expect, sha)
      if (r === 'ok') {
        const lock: LockHolder = {sha, held: true}
        renewEvery(lock)
        return {ok: true, lock}
      }
      if (r === 'unreachable') return {ok: false, why: 'unreachable', message: `the remote ${o.remote} did not answer while taking ${LAND_LOCK_REF}`}
      const cur = await current()
      if (cur === undefined) return {ok: false, why: 'unreachable', message: `the remote ${o.remote} did not answer while reading ${LAND_LOCK_REF}`}
      // gone meanwhile: create; expired past the skew allowance: take it over; else wait its turn
      if (cur === null) expect = ''
      else if (o.now().getTime() > cur.expiresAt + o.skewMs) expect = cur.sha
      else {
        expect = ''
        await abortableSleep(200 + Math.floor(Math.random() * Math.min(1000, 100 * 2 ** Math.min(round, 4))), signal)
      }
    }
  }

  async function release(lock: LockHolder): Promise<void> {
    const t = timers.get(lock)
    if (t) clearInterval(t)
    timers.delete(lock)
    if (lock.held) await push(lock.sha, null).catch(() => 'lost')
    lock.held = false
  }

  async function heldByOther(): Promise<boolean> {
    const cur = await current()
    if (!cur) return false
    if (cur.message?.run === o.run) return false
    return o.now().getTime() < cur.expiresAt
  }

  return {acquire, release, heldByOther}
}
