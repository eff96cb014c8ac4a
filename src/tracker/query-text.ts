/**
 * Output text of the read-only tracker commands. Each function returns the
 * exact stdout text, so the oclif command (or a startup fast path in
 * bin/run.js) only has to print it. Kept light: no zod, no execa at import.
 */
import {projectPaths} from '../util/root.js'
import type {Bead, ProcessProbe, TrackerSnapshot} from './types.js'
import {readTrackerForQuery} from './parse-cache.js'
import {blockedBeads, depIds, helixOwner, issueTypeOf, priorityOf, readyBeads, readyFrom, statusCounts, statusOf, type StatusCounts} from './queries.js'
import {readReadyInput} from './ready-read.js'
import {claimMayBeStale, orphanThresholdSec, staleClaimIds, withOneDispatchScan} from './liveness.js'
import {realProbe} from '../proc/process-probe.js'
import {sanitize, sanitizeBlock} from '../util/sanitize.js'

export interface ReportOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  json?: boolean
}

/** One `--json` line for any value (newline-terminated). */
export function jsonLine(v: unknown): string {
  return JSON.stringify(v) + '\n'
}

async function load(opts: ReportOptions): Promise<TrackerSnapshot> {
  const env = opts.env ?? process.env
  const paths = projectPaths(opts.cwd ?? process.cwd(), env)
  // read-only commands: the identity-checked parse cache under .helix/ (parse-cache.ts)
  return readTrackerForQuery(paths.root, paths.file, env)
}

/** what decides whether a claim is stale: one probe (one /proc scan), one clock reading, the threshold */
interface StaleCheck {
  probe: ProcessProbe
  now: Date
  thresholdSec: number
}

const staleCheck = (env: NodeJS.ProcessEnv): StaleCheck => ({probe: withOneDispatchScan(realProbe()), now: new Date(), thresholdSec: orphanThresholdSec(env)})

async function staleSet(snap: {readonly beads: readonly Bead[]}, c: StaleCheck): Promise<Set<string>> {
  if (!snap.beads.some((b) => statusOf(b) === 'in_progress')) return new Set()
  return staleClaimIds(snap, c.probe, c.now, c.thresholdSec)
}

/**
 * The ready list (SPEC 2.3) from a snapshot, with stale in_progress claims
 * included, those of other owners too (SPEC 13.3: `tracker ready` shows them as
 * `claimed by <owner> (stale)`; only `helix run` and `helix next` skip them).
 */
export async function readyFromSnapshot(snap: TrackerSnapshot, env: NodeJS.ProcessEnv = process.env): Promise<Bead[]> {
  return readyBeads(snap, {staleClaims: await staleSet(snap, staleCheck(env)), owner: null})
}

/** ` (claimed by <owner> (stale))` for a ready bead that is a stale claim of another owner. */
function staleClaimNote(b: Bead, env: NodeJS.ProcessEnv): string {
  if (statusOf(b) !== 'in_progress') return ''
  const owner = typeof b.owner === 'string' && b.owner.trim() !== '' ? b.owner : null
  if (owner === null || owner === helixOwner(env)) return ''
  return `  (claimed by ${oneLine(owner)} (stale))`
}

/*
 * Text output is for a terminal, and ids, titles and notes are untrusted
 * (agents write them): every such string goes through the one sanitizer
 * (SPEC 13.5): control and bidi characters become `?`, an embedded newline `⏎`,
 * so a title can neither drive the terminal nor forge extra list lines.
 * `--json` output is never altered.
 */
const oneLine = sanitize
const multiLine = sanitizeBlock

function titleOf(b: Bead): string {
  return typeof b.title === 'string' ? oneLine(b.title) : ''
}

/** `[status] id (type) — title` */
export function headline(b: Bead): string {
  return oneLine(`[${statusOf(b)}] ${b.id} (${issueTypeOf(b)}) — `) + titleOf(b)
}

/** A list line: `id  P<n>  [status] title` */
export function listLine(b: Bead): string {
  return oneLine(`${b.id}  P${priorityOf(b)}  [${statusOf(b)}] `) + titleOf(b)
}

export async function trackerReadyOutput(opts: ReportOptions = {}): Promise<string> {
  const env = opts.env ?? process.env
  // whole beads are printed: the tracker is read once and parsed once, no parse cache (parse-cache.ts),
  // and only the beads that may be ready are kept whole (ready-read.ts); the read's "certainly
  // live" and the stale check after it share one probe, clock reading and threshold
  const c = staleCheck(env)
  const input = readReadyInput(projectPaths(opts.cwd ?? process.cwd(), env).file, {mayBeStale: (b) => claimMayBeStale(b, c.probe, c.now, c.thresholdSec)})
  const ready = readyFrom(input, {staleClaims: await staleSet(input, c), owner: null})
  if (opts.json) return jsonLine(ready)
  let out = ''
  for (const b of ready) out += listLine(b) + staleClaimNote(b, env) + '\n'
  return out
}

export async function trackerStatusCounts(opts: ReportOptions = {}): Promise<StatusCounts> {
  const env = opts.env ?? process.env
  const snap = await load(opts)
  const ready = await readyFromSnapshot(snap, env)
  return statusCounts(snap, ready.length)
}

export function formatStatusText(c: StatusCounts): string {
  const rows: Array<[string, number]> = [
    ['Total', c.total],
    ['Open', c.open],
    ['In progress', c.in_progress],
    ['Closed', c.closed],
    ['Blocked', c.blocked],
    ['Proposed', c.proposed],
    ['Cancelled', c.cancelled],
    ['Ready', c.ready],
  ]
  return rows.map(([k, v]) => `${(k + ':').padEnd(13)}${v}`).join('\n') + '\n'
}

export async function trackerStatusOutput(opts: ReportOptions = {}): Promise<string> {
  const c = await trackerStatusCounts(opts)
  return opts.json ? jsonLine(c) : formatStatusText(c)
}

export async function trackerBlockedOutput(opts: ReportOptions = {}): Promise<string> {
  const snap = await load(opts)
  const blocked = blockedBeads(snap)
  if (opts.json) return jsonLine(blocked.map(({bead, waitingOn, reason}) => ({...bead, waiting_on: waitingOn, ...(reason !== undefined ? {blocked_reason: reason} : {})})))
  let out = ''
  for (const {bead, waitingOn, reason} of blocked) {
    const why =
      reason !== undefined ? `label blocked${reason ? `: ${reason}` : ''}` : waitingOn.length ? `waiting on ${waitingOn.join(', ')}` : `status ${statusOf(bead)}`
    out += `${listLine(bead)}  (${oneLine(why)})\n`
  }
  return out
}

function indent(text: string, pad: string): string {
  return text.split('\n').join('\n' + pad)
}

/** Text form of `show`: headline then indented fields. */
export function showText(b: Bead, snap?: TrackerSnapshot): string {
  const lines = [headline(b)]
  const skip = new Set(['id', 'title', 'status', 'issue_type', 'dependencies'])
  const deps = depIds(b)
  if (deps.length) {
    const shown = deps.map((d) => {
      const t = snap?.byId.get(d)
      return t ? `${d} (${statusOf(t)})` : `${d} (missing)`
    })
    lines.push(oneLine(`  depends on: ${shown.join(', ')}`))
  }
  // an epic (or any parent) lists its children, the way DDx's show does
  const children = snap ? snap.beads.filter((c) => c.parent === b.id && c.id !== b.id) : []
  if (children.length) {
    const done = children.filter((c) => statusOf(c) === 'closed').length
    lines.push(`  children: ${done} of ${children.length} closed`)
    for (const c of children) lines.push(oneLine(`    ${c.id} [${statusOf(c)}] ${typeof c.title === 'string' ? c.title : ''}`).trimEnd())
  }
  for (const k of Object.keys(b).sort()) {
    if (skip.has(k)) continue
    const v = b[k]
    let s: string
    if (typeof v === 'string') s = v
    else if (Array.isArray(v) && v.every((x) => typeof x === 'string')) s = v.join(', ')
    else s = JSON.stringify(v)
    lines.push(`  ${oneLine(k)}: ${indent(multiLine(s), '    ')}`)
  }
  return lines.join('\n') + '\n'
}

/** `dep tree`: the bead and everything it depends on, as an indented tree. */
export function depTreeText(snap: TrackerSnapshot, id: string): string {
  const out: string[] = []
  const walk = (cur: string, prefix: string, last: boolean, root: boolean, seen: Set<string>): void => {
    const b = snap.byId.get(cur)
    const label = oneLine(b ? `${cur} [${statusOf(b)}] ${typeof b.title === 'string' ? b.title : ''}` : `${cur} (missing)`)
    const branch = root ? '' : last ? '└── ' : '├── '
    if (seen.has(cur)) {
      out.push(`${prefix}${branch}${oneLine(cur)} (cycle)`)
      return
    }
    out.push(`${prefix}${branch}${label}`)
    if (!b) return
    const kids = depIds(b)
    const next = new Set(seen).add(cur)
    const childPrefix = root ? '' : prefix + (last ? '    ' : '│   ')
    kids.forEach((k, i) => walk(k, childPrefix, i === kids.length - 1, false, next))
  }
  walk(id, '', true, true, new Set())
  return out.join('\n') + '\n'
}
