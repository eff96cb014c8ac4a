/**
 * `helix status --remote <name>` (SPEC 19.5): the fleet as the remote sees it —
 * one row per claim ref (host, bead, title, age, expires in), the queue's counts
 * at the remote base tip, and the hosts that claimed or landed within the last
 * lease period. Every string that comes from the remote goes through the sanitizer.
 */
import {git, gitEnv} from '../git/run.js'
import {claimState, createClaims, skewMs} from '../remote/claim-refs.js'
import {parseTracker} from '../tracker/codec.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {prRows, renderPrRows, type PrRow} from './pr-status.js'
import {truncate} from './text.js'
import {COMPACT_BELOW} from './compact.js'

export interface FleetClaimRow {
  bead: string
  title: string
  host: string | null
  run: string | null
  attempt: number | null
  claimed_at: string | null
  expires_at: string
  age_s: number | null
  expires_in_s: number
  state: 'live' | 'expired' | 'takeable'
  /** SPEC 20.5: the pull request the bead awaits (such a claim never expires) */
  pr_url: string | null
}

export interface FleetView {
  remote: string
  base: string
  tip: string
  counts: {total: number; open: number; claimed: number; in_progress: number; closed: number; blocked: number}
  claims: FleetClaimRow[]
  /** hosts with a claim or a helix commit on the base within the last lease period */
  hosts: string[]
  lease_s: number
  /** SPEC 20.5 (--land pr): the pull requests awaiting merge */
  pull_requests: PrRow[]
}

export function humanSpan(s: number): string {
  const a = Math.abs(s)
  if (a < 90) return `${Math.round(a)}s`
  if (a < 90 * 60) return `${Math.round(a / 60)}m`
  return `${Math.round(a / 3600)}h`
}

export async function fleetView(opts: {root: string; remote: string; env: NodeJS.ProcessEnv; leaseSec: number; now?: Date}): Promise<FleetView> {
  const env = gitEnv(opts.env, {name: 'helix', email: 'helix@localhost'})
  const run = (args: string[]) => git(args, {cwd: opts.root, env})
  const now = opts.now ?? new Date()
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(opts.remote) || (await run(['remote', 'get-url', opts.remote])).code !== 0)
    throw new HelixError(`helix status: --remote ${sanitize(opts.remote)}: no such git remote here (see 'git remote -v')`, EXIT.ERROR)
  const head = await run(['symbolic-ref', '-q', '--short', 'HEAD'])
  if (head.code !== 0) throw new HelixError(`helix status: --remote needs a checkout on a branch (the base); HEAD is detached`, EXIT.ERROR)
  const base = head.stdout.trim()
  const prefix = (await run(['rev-parse', '--show-prefix'])).stdout.trim()
  const f = await run(['fetch', '-q', '--no-tags', '--no-write-fetch-head', opts.remote, `+refs/heads/${base}:refs/remotes/${opts.remote}/${base}`])
  if (f.code !== 0) throw new HelixError(`helix status: --remote ${sanitize(opts.remote)}: cannot fetch ${sanitize(base)} (unreachable, or no such branch there)`, EXIT.ERROR)
  const tip = (await run(['rev-parse', `refs/remotes/${opts.remote}/${base}`])).stdout.trim()
  const text = await run(['cat-file', 'blob', `${tip}:${prefix}.ddx/beads.jsonl`])
  const snap = parseTracker(text.code === 0 ? text.stdout : '', `${opts.remote}/${base}`)
  const claims = createClaims({cwd: opts.root, remote: opts.remote, env: opts.env, host: '', run: '', pid: 0, leaseSec: opts.leaseSec, now: () => now})
  const list = (await claims.list()) ?? []
  const skew = skewMs(opts.env)
  const rows: FleetClaimRow[] = list.map((c) => {
    const m = c.message
    const claimed = m ? Date.parse(m.claimed_at) : c.committedAt.getTime()
    return {
      bead: c.bead,
      title: String(snap.byId.get(c.bead)?.title ?? ''),
      host: m?.host ?? null,
      run: m?.run ?? null,
      attempt: m?.attempt ?? null,
      claimed_at: m?.claimed_at ?? null,
      expires_at: c.expiresAt.toISOString(),
      age_s: Math.round((now.getTime() - claimed) / 1000),
      expires_in_s: Math.round((c.expiresAt.getTime() - now.getTime()) / 1000),
      state: claimState(c, now, skew),
      pr_url: m?.pr_url ?? null,
    }
  })
  const live = new Set(rows.filter((r) => r.state === 'live').map((r) => r.bead))
  const counts = {total: snap.beads.length, open: 0, claimed: 0, in_progress: 0, closed: 0, blocked: 0}
  for (const b of snap.beads) {
    const s = b.status ?? 'open'
    if (s === 'closed') counts.closed++
    else if (s === 'in_progress') counts.in_progress++
    else if (s === 'blocked' || (b.labels ?? []).includes('blocked')) counts.blocked++
    else if (live.has(b.id)) counts.claimed++
    else if (s === 'open') counts.open++
  }
  const since = Math.floor(now.getTime() / 1000) - opts.leaseSec
  const log = await run(['log', `--since=@${since}`, '--format=%s', tip])
  const hosts = new Set<string>()
  for (const r of rows) if (r.host && r.age_s !== null && r.age_s <= opts.leaseSec) hosts.add(r.host)
  for (const s of log.stdout.split('\n')) {
    const m = /^helix\(([^)]{1,200})\): /.exec(s)
    if (m) hosts.add(m[1] as string)
  }
  const pullRequests = await prRows(list, (id) => String(snap.byId.get(id)?.title ?? ''), {root: opts.root, env: opts.env, now, closedAtTip: (id) => snap.byId.get(id)?.status === 'closed'})
  return {remote: opts.remote, base, tip, counts, claims: rows, hosts: [...hosts].sort(), lease_s: opts.leaseSec, pull_requests: pullRequests}
}

/**
 * The fleet as text. Without a width (a pipe, a file) lines are whole; with one, every
 * line is cut to it, and below 60 columns (a 39-column tmux pane) each claim takes
 * short lines of its own instead of one long line that would wrap mid-word.
 */
export function renderFleet(v: FleetView, size: {width?: number; height?: number} = {}): string {
  const width = size.width ?? Infinity
  const lines = width < COMPACT_BELOW ? compactFleet(v) : wideFleet(v)
  const height = size.height ?? Infinity
  const shown = lines.length <= height ? lines : [...lines.slice(0, Math.max(0, height - 1)), `… and ${lines.length - Math.max(0, height - 1)} more lines`]
  return shown.map((l) => (Number.isFinite(width) ? truncate(l, width) : l)).join('\n') + '\n'
}

function whenOf(r: FleetClaimRow): string {
  return r.pr_url ? 'awaiting merge' : r.state === 'live' ? `expires in ${humanSpan(r.expires_in_s)}` : `expired ${humanSpan(r.expires_in_s)} ago${r.state === 'takeable' ? ', free to take over' : ''}`
}

function compactFleet(v: FleetView): string[] {
  const c = v.counts
  const lines = [`fleet ${sanitize(v.remote)}/${sanitize(v.base)} @${v.tip.slice(0, 7)}`, `${c.total} beads: ${c.open} open`, `  ${c.claimed} claimed, ${c.closed} closed`]
  if (c.blocked || c.in_progress) lines.push(`  ${c.blocked} blocked, ${c.in_progress} in progress`)
  if (v.claims.length === 0) lines.push('no claims')
  for (const r of v.claims) {
    lines.push(`${sanitize(r.bead)} by ${r.host === null ? '?' : sanitize(r.host)}`)
    lines.push(`  ${whenOf(r)}`)
    if (r.age_s !== null) lines.push(`  age ${humanSpan(r.age_s)}`)
    if (r.title) lines.push(`  ${sanitize(r.title)}`)
  }
  lines.push(`active (${humanSpan(v.lease_s)}):`)
  lines.push(...(v.hosts.length ? v.hosts.map((h) => `  ${sanitize(h)}`) : ['  none']))
  return lines
}

function wideFleet(v: FleetView): string[] {
  const c = v.counts
  const lines = [
    `fleet ${sanitize(v.remote)}/${sanitize(v.base)} at ${v.tip.slice(0, 12)}: ${c.total} beads — ${c.open} open, ${c.claimed} claimed, ${c.closed} closed${c.blocked ? `, ${c.blocked} blocked` : ''}${c.in_progress ? `, ${c.in_progress} in progress` : ''}`,
  ]
  if (v.claims.length === 0) lines.push('no claims')
  for (const r of v.claims) {
    const who = r.host === null ? 'an unreadable claim' : sanitize(r.host)
    const when = whenOf(r)
    const age = r.age_s === null ? '' : `, age ${humanSpan(r.age_s)}`
    const title = r.title ? `: ${sanitize(r.title).slice(0, 60)}` : ''
    lines.push(`${sanitize(r.bead)} claimed by ${who} (${when}${age})${title}`)
  }
  lines.push(...renderPrRows(v.pull_requests, humanSpan))
  lines.push(v.hosts.length ? `hosts active in the last ${humanSpan(v.lease_s)}: ${v.hosts.map((h) => sanitize(h)).join(', ')}` : `no host active in the last ${humanSpan(v.lease_s)}`)
  return lines
}
