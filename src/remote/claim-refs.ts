/**
 * Claims as lease refs on the git remote (SPEC 19.1). A claim is
 * `refs/helix/claims/<id>` pointing at a commit on the empty tree whose message
 * is one JSON object (host, run, pid, attempt, claimed_at, expires_at). The
 * remote's atomic ref update is the only compare-and-set:
 *   create    `--force-with-lease=<ref>:`         (the ref must not exist)
 *   renew     `--force-with-lease=<ref>:<ours>`   (every lease/3)
 *   release   `--force-with-lease=<ref>:<ours>` deleting it
 *   take over `--force-with-lease=<ref>:<theirs>` once theirs expired > 60 s ago
 * One `git ls-remote` lists every claim; messages are read from the commits,
 * fetched only when not already known, and cached by sha.
 */
import os from 'node:os'
import {gitEnv, firstLine} from '../git/run.js'
import {idProblem} from '../git/names.js'
import {openRepo} from '../git/repo.js'
import {refLine, type PushResult} from './push.js'

export const CLAIMS_PREFIX = 'refs/helix/claims/'
/** clock skew allowance before an expired claim may be taken over (HELIX_LEASE_SKEW seconds overrides) */
export const SKEW_MS = 60_000

/** the skew allowance: HELIX_LEASE_SKEW (whole seconds) or 60 s */
export function skewMs(env: NodeJS.ProcessEnv): number {
  const raw = env.HELIX_LEASE_SKEW?.trim()
  return raw && /^\d{1,6}$/.test(raw) ? Number(raw) * 1000 : SKEW_MS
}

export interface ClaimMessage {
  host: string
  run: string
  pid: number
  attempt: number
  claimed_at: string
  expires_at: string
  /** SPEC 20.5 (--land pr): the bead awaits this pull request's merge; such a claim never expires */
  pr_url?: string
}

export interface RemoteClaim {
  bead: string
  ref: string
  sha: string
  /** null when the commit's message is not a valid claim object */
  message: ClaimMessage | null
  /** the commit's committer time */
  committedAt: Date
  /** when the lease ends (an invalid message: one lease from its commit time) */
  expiresAt: Date
}

export type ClaimOutcome =
  | {ok: true; sha: string}
  /**
   * `lost`: the ref was not what we expected (a race, a takeover); `unreachable`: the
   * remote did not answer; `blocked`: something that is not a claim is in the way (a
   * ref `refs/helix/claims/<id>/…` makes `<id>`'s claim ref impossible, a server hook
   * refuses it): no host holds it, and trying again changes nothing
   */
  | {ok: false; why: 'lost' | 'unreachable' | 'blocked'; message: string; blockingRef?: string}

export interface ClaimsOptions {
  /** a directory inside the local repository */
  cwd: string
  remote: string
  env: NodeJS.ProcessEnv
  host: string
  run: string
  pid: number
  leaseSec: number
  now: () => Date
}

export const claimRef = (bead: string): string => `${CLAIMS_PREFIX}${bead}`

/** this host's name in claims (SPEC 19.1): HELIX_HOST, else the host name */
export const hostName = (env: NodeJS.ProcessEnv): string => env.HELIX_HOST?.trim() || os.hostname()

/** A claim message, or null when `text` is not one (wrong shape, wrong types). */
export function parseClaimMessage(text: string): ClaimMessage | null {
  let v: unknown
  try {
    v = JSON.parse(text.trim())
  } catch {
    return null
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null
  const o = v as Record<string, unknown>
  const str = (k: string) => typeof o[k] === 'string' && (o[k] as string).length > 0 && (o[k] as string).length <= 200
  if (!str('host') || !str('run') || !str('claimed_at') || !str('expires_at')) return null
  if (!Number.isSafeInteger(o.pid) || !Number.isSafeInteger(o.attempt)) return null
  if (Number.isNaN(Date.parse(o.claimed_at as string)) || Number.isNaN(Date.parse(o.expires_at as string))) return null
  const pr = typeof o.pr_url === 'string' && o.pr_url.length > 0 && o.pr_url.length <= 500 ? {pr_url: o.pr_url} : {}
  return {host: o.host as string, run: o.run as string, pid: o.pid as number, attempt: o.attempt as number, claimed_at: o.claimed_at as string, expires_at: o.expires_at as string, ...pr}
}

/** live: the lease has not ended; takeable: it ended more than the skew allowance ago */
export function claimState(c: RemoteClaim, now: Date, skew = SKEW_MS): 'live' | 'expired' | 'takeable' {
  const t = now.getTime()
  if (t < c.expiresAt.getTime()) return 'live'
  return t > c.expiresAt.getTime() + skew ? 'takeable' : 'expired'
}

export interface Claims {
  /** one `git ls-remote` + the messages: every claim on the remote; null when unreachable */
  list(): Promise<RemoteClaim[] | null>
  create(bead: string, attempt: number): Promise<ClaimOutcome>
  renew(bead: string, ours: string, attempt: number): Promise<ClaimOutcome>
  release(bead: string, ours: string): Promise<ClaimOutcome>
  /** replace an expired claim (`theirs`) by ours */
  takeOver(bead: string, theirs: string, attempt: number): Promise<ClaimOutcome>
  leaseMs: number
  /** git's own line of the last `list` that failed (unsanitized), null after a success */
  lastFailure(): string | null
}

export function createClaims(o: ClaimsOptions): Claims {
  const env = gitEnv(o.env, {name: 'helix', email: 'helix@localhost'})
  const leaseMs = o.leaseSec * 1000
  const cache = new Map<string, {message: ClaimMessage | null; committedAt: Date}>()
  let emptyTree: string | null = null
  let last = ''
  let failure: string | null = null
  const repo = openRepo(o.cwd, env)
  const run = (args: string[]) => repo.run(args)

  async function tree(): Promise<string> {
    if (emptyTree) return emptyTree
    const r = await run(['hash-object', '-t', 'tree', '-w', '/dev/null'])
    if (r.code !== 0) throw new Error(`git hash-object failed: ${firstLine(r)}`)
    emptyTree = r.stdout.trim()
    return emptyTree
  }

  /** a fresh claim commit; its JSON makes it unique (a same-sha push would be "up to date") */
  async function claimCommit(attempt: number): Promise<string> {
    const now = o.now()
    let claimedAt = now.toISOString()
    if (claimedAt === last) claimedAt = new Date(now.getTime() + 1).toISOString()
    last = claimedAt
    const msg: ClaimMessage = {host: o.host, run: o.run, pid: o.pid, attempt, claimed_at: claimedAt, expires_at: new Date(Date.parse(claimedAt) + leaseMs).toISOString()}
    const r = await run(['commit-tree', '-m', JSON.stringify(msg), await tree()])
    if (r.code !== 0) throw new Error(`git commit-tree failed: ${firstLine(r)}`)
    const sha = r.stdout.trim()
    cache.set(sha, {message: msg, committedAt: now})
    return sha
  }

  function outcome(p: PushResult, ref: string, sha: string): ClaimOutcome {
    const line = refLine(p, ref)
    if (p.ok) return line ? {ok: true, sha} : {ok: false, why: 'unreachable', message: 'git push printed no line for the claim'}
    if (p.kind === 'conflict') return {ok: false, why: 'blocked', message: p.message, ...(p.blockingRef ? {blockingRef: p.blockingRef} : {})}
    if (p.kind === 'rejected') return {ok: false, why: 'blocked', message: p.message}
    if (p.kind === 'unreachable') return {ok: false, why: 'unreachable', message: p.message}
    return {ok: false, why: 'lost', message: line?.summary ?? p.message}
  }

  async function write(bead: string, expect: string, attempt: number): Promise<ClaimOutcome> {
    if (idProblem(bead)) return {ok: false, why: 'lost', message: `bead id cannot name a ref`}
    const ref = claimRef(bead)
    const sha = await claimCommit(attempt)
    const p = await repo.push([`--force-with-lease=${ref}:${expect}`, o.remote, `${sha}:${ref}`], {hooks: false})
    return outcome(p, ref, sha)
  }

  async function readMessages(rows: Array<{ref: string; sha: string}>): Promise<void> {
    const missing: string[] = []
    for (const {ref, sha} of rows) if (!cache.has(sha) && (await run(['cat-file', '-e', `${sha}^{commit}`])).code !== 0) missing.push(ref)
    // fetch the objects of the claims not seen yet, without creating any local ref
    if (missing.length > 0) await repo.fetch(['--no-write-fetch-head', o.remote, ...missing])
    for (const {sha} of rows) {
      if (cache.has(sha)) continue
      const r = await run(['cat-file', 'commit', sha])
      if (r.code !== 0) continue
      const [head = '', ...body] = r.stdout.split('\n\n')
      const ct = /^committer .* (\d+) [+-]\d{4}$/m.exec(head)
      cache.set(sha, {message: parseClaimMessage(body.join('\n\n')), committedAt: new Date(ct ? Number(ct[1]) * 1000 : 0)})
    }
  }

  async function list(): Promise<RemoteClaim[] | null> {
    const r = await run(['ls-remote', o.remote, `${CLAIMS_PREFIX}*`])
    if (r.code !== 0) {
      failure = firstLine(r)
      return null
    }
    failure = null
    const rows: Array<{ref: string; sha: string}> = []
    for (const line of r.stdout.split('\n')) {
      const [sha, ref] = line.trim().split('\t')
      if (sha && ref?.startsWith(CLAIMS_PREFIX)) rows.push({sha, ref})
    }
    await readMessages(rows)
    return rows.map(({ref, sha}) => {
      const m = cache.get(sha) ?? {message: null, committedAt: new Date(0)}
      const expires = m.message ? new Date(m.message.expires_at) : new Date(m.committedAt.getTime() + leaseMs)
      return {bead: ref.slice(CLAIMS_PREFIX.length), ref, sha, message: m.message, committedAt: m.committedAt, expiresAt: expires}
    })
  }

  return {
    list,
    leaseMs,
    lastFailure: () => failure,
    create: (bead, attempt) => write(bead, '', attempt),
    renew: (bead, ours, attempt) => write(bead, ours, attempt),
    takeOver: (bead, theirs, attempt) => write(bead, theirs, attempt),
    async release(bead, ours) {
      const ref = claimRef(bead)
      const p = await repo.push([`--force-with-lease=${ref}:${ours}`, o.remote, `:${ref}`], {hooks: false})
      return outcome(p, ref, ours)
    },
  }
}
