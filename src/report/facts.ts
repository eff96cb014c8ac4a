/**
 * What `helix report` adds to runs.jsonl's story: the check and review
 * verdicts from the runs' session logs, what is left in the tracker now, and beads
 * closed during the runs without a cycle of their own (an epic closed with its last
 * child). Reading is best-effort: a missing log or tracker leaves the section empty.
 */
import {readFileSync, statSync} from 'node:fs'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {blockedNoteReason, labelledBlocked} from '../tracker/queries.js'
import type {Report} from './summary.js'

/** Logs bigger than this are not scanned for verdicts (the report stays quick). */
const MAX_LOG_BYTES = 64 * 1024 * 1024

/** `check` and `review` events of the session logs the runs name. */
export function readVerdicts(logs: ReadonlyArray<string | null>): Report['verdicts'] {
  const out: Report['verdicts'] = []
  for (const log of new Set(logs)) {
    if (!log) continue
    let text: string
    try {
      if (statSync(log).size > MAX_LOG_BYTES) continue
      text = readFileSync(log, 'utf8')
    } catch {
      continue // the log was removed or moved: no verdicts from it
    }
    for (const line of text.split('\n')) {
      if (!line.includes('"msg":"check"') && !line.includes('"msg":"review"')) continue
      let rec: Record<string, unknown>
      try {
        rec = JSON.parse(line) as Record<string, unknown>
      } catch {
        continue
      }
      const at = typeof rec.time === 'number' ? new Date(rec.time).toISOString() : typeof rec.time === 'string' ? rec.time : null
      if (!at || Number.isNaN(Date.parse(at))) continue
      if (rec.msg === 'check' && typeof rec.next_action === 'string') out.push({at, kind: 'check', bead: null, verdict: rec.next_action, log})
      else if (rec.msg === 'review' && typeof rec.review_status === 'string') {
        const issues = typeof rec.issues === 'number' && rec.issues > 0 ? ` (${rec.issues} issue${rec.issues === 1 ? '' : 's'})` : ''
        out.push({at, kind: 'review', bead: typeof rec.bead === 'string' ? rec.bead : null, verdict: `${rec.review_status}${issues}`, log})
      }
    }
  }
  return out.sort((a, b) => Date.parse(a.at) - Date.parse(b.at))
}

function statusOf(b: Bead): string {
  return typeof b.status === 'string' && b.status ? b.status : 'open'
}

/** Not-closed beads now, each with one word of why: ready, waiting on X, blocked: reason, in progress. */
export function leftInTracker(snap: TrackerSnapshot): Report['left'] {
  const out: Report['left'] = []
  for (const b of snap.beads) {
    const s = statusOf(b)
    if (s === 'closed' || s === 'cancelled') continue
    const title = typeof b.title === 'string' ? b.title : ''
    let state = s
    if (labelledBlocked(b) || s === 'blocked') state = `blocked: ${blockedNoteReason(b) ?? 'needs a human'}`
    else if (s === 'open') {
      const waits = (Array.isArray(b.dependencies) ? b.dependencies : [])
        .map((d) => (d && typeof d === 'object' ? (d as {depends_on_id?: unknown}).depends_on_id : undefined))
        .filter((id): id is string => typeof id === 'string' && statusOf(snap.byId.get(id) ?? ({status: 'open'} as Bead)) !== 'closed')
      state = waits.length ? `waiting on ${waits.join(', ')}` : 'ready'
    } else if (s === 'in_progress') state = 'in progress'
    out.push({id: b.id, title, state})
  }
  return out
}

/**
 * Beads closed during the runs' span that no cycle closed: epics closed with their last
 * child. Only a parent of a bead these runs closed counts: on one host of a fleet, the
 * other hosts' beads closed in the same hours are theirs, not an epic of ours.
 * The epic is the host's that closed its last child here.
 */
export function closedWithoutCycle(snap: TrackerSnapshot, r: Report): Report['closed'] {
  if (!r.span) return []
  const start = Date.parse(r.span.start)
  const end = Date.parse(r.span.end) + 60_000
  const seen = new Set(r.closed.map((c) => c.id))
  // parent id → the last of its children these runs closed
  const lastChild = new Map<string, Report['closed'][number]>()
  for (const c of r.closed) {
    const parent = snap.byId.get(c.id)?.parent
    if (typeof parent !== 'string' || !parent) continue
    const prev = lastChild.get(parent)
    if (!prev || Date.parse(c.closed_at) >= Date.parse(prev.closed_at)) lastChild.set(parent, c)
  }
  const out: Report['closed'] = []
  for (const b of snap.beads) {
    if (statusOf(b) !== 'closed' || seen.has(b.id)) continue
    const child = lastChild.get(b.id)
    if (!child) continue
    const at = typeof b.closed_at === 'string' ? b.closed_at : typeof b.updated_at === 'string' ? b.updated_at : ''
    const t = Date.parse(at)
    if (Number.isNaN(t) || t < start || t > end) continue
    out.push({id: b.id, title: typeof b.title === 'string' ? b.title : '', commits: [], closed_at: new Date(t).toISOString(), via: 'tracker', ...(child.host ? {host: child.host} : {})})
  }
  return out
}

/**
 * What needs the operator (SPEC 22.2), for the report's first line: every bead still
 * blocked now (from the tracker, with the reason of its last BLOCKED note), else what the
 * runs' blocker lists said.
 */
export function needsYou(r: Report): NonNullable<Report['needs_you']> {
  const out: NonNullable<Report['needs_you']> = []
  const seen = new Set<string>()
  for (const l of r.left) {
    if (!l.state.startsWith('blocked')) continue
    seen.add(l.id)
    out.push({id: l.id, title: l.title, why: l.state})
  }
  // without a readable tracker (left is empty), the runs' own blockers still name them
  if (r.left.length === 0) {
    const closed = new Set(r.closed.map((c) => c.id))
    for (const b of r.blocked) if (!seen.has(b.id) && !closed.has(b.id)) out.push({id: b.id, title: b.title, why: `blocked: ${b.reason || 'no reason recorded'}`})
  }
  return out
}
