/** Text form of `helix report` (SPEC 16.5): what happened, for an operator over coffee. */
import {prAge} from '../operator/pr-status.js'
import {sanitize} from '../util/sanitize.js'
import {formatAge} from '../operator/text.js'
import type {Report} from './summary.js'
import {groupDigits} from '../util/numbers.js'

export function formatMs(ms: number): string {
  return formatAge(Math.round(ms / 1000))
}

export function formatTokens(n: number): string {
  return groupDigits(n)
}

export function formatCost(usd: number): string {
  return `$${usd.toFixed(2)}`
}

function localTime(iso: string): string {
  const d = new Date(iso)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`
}

function short(commit: string): string {
  return /^[0-9a-f]{12,}$/i.test(commit) ? commit.slice(0, 10) : commit
}

function hhmm(iso: string): string {
  return localTime(iso).slice(11)
}

/** `2026-11-24 04:02 → 06:40 (2h 38m)`: the runs' real span, not the query window. */
export function spanText(r: Report): string {
  if (!r.span) return `nothing since ${localTime(r.since)}`
  const a = localTime(r.span.start)
  const b = localTime(r.span.end)
  const ms = Date.parse(r.span.end) - Date.parse(r.span.start)
  return `${a} → ${a.slice(0, 10) === b.slice(0, 10) ? b.slice(11) : b} (${formatMs(ms)})`
}

/** `error: review output missing REVIEW_STATUS trailer`, or just the reason. */
export function stopText(run: Report['run_list'][number]): string {
  const reason = run.stop_reason ? sanitize(run.stop_reason) : 'no stop recorded (killed?)'
  return run.stop_message ? `${reason}: ${sanitize(run.stop_message)}` : reason
}

/** The failures grouped by bead, beads in the order of their first failure, attempts in order. */
export function failuresByBead(failures: Report['failures']): Array<{id: string; title: string; attempts: Report['failures']}> {
  const groups = new Map<string, {id: string; title: string; attempts: Report['failures']}>()
  for (const f of failures) {
    let g = groups.get(f.id)
    if (!g) {
      g = {id: f.id, title: f.title, attempts: []}
      groups.set(f.id, g)
    }
    if (f.title) g.title = f.title
    g.attempts.push(f)
  }
  return [...groups.values()]
}

/** `attempt 2 at 04:36` and, when a later cycle closed it, `— closed on attempt 3`. */
export function failureText(f: Report['failures'][number]): string {
  const later = f.later_closed ? ` — closed on attempt ${f.later_closed.attempt}` : ' — still not closed'
  return `attempt ${f.attempt} at ${hhmm(f.at)}: ${sanitize(f.outcome)}${f.reason ? ` (${sanitize(f.reason)})` : ''}${later}`
}

/** `blocked: intractable …; last: rc=1: tests fail` → `blocked: rc=1: tests fail` (the words the operator acts on) */
function shortWhy(why: string): string {
  const i = why.lastIndexOf('; last: ')
  return i < 0 ? why : `${why.startsWith('blocked') ? 'blocked: ' : ''}${why.slice(i + '; last: '.length)}`
}

/** `2 beads need you: hx-a blocked: tests fail; hx-b blocked: …` (SPEC 22.2), null when nothing does */
export function needsYouLine(r: Report): string | null {
  const n = r.needs_you ?? []
  if (n.length === 0) return null
  return `${n.length} bead${n.length === 1 ? ' needs' : 's need'} you: ${n.map((x) => `${sanitize(x.id)} ${sanitize(shortWhy(x.why))}`).join('; ')}`
}

/** ` (on host-b)` when the runs were a fleet's */
function onHost(host: string | undefined): string {
  return host ? ` (on ${sanitize(host)})` : ''
}

/** `origin/main at 1a2b3c4d5e, hosts host-a (2 runs), host-b (1 run)` */
export function fleetText(f: NonNullable<Report['fleet']>): string {
  const hosts = f.hosts.length ? f.hosts.map((h) => `${sanitize(h.host)} (${h.runs} run${h.runs === 1 ? '' : 's'})`).join(', ') : 'no host has pushed run records yet'
  return `${sanitize(f.remote)}/${sanitize(f.base)} at ${sanitize(f.tip.slice(0, 10))}, hosts ${hosts}`
}

export function renderReportText(r: Report): string {
  const out: string[] = []
  const cost = (usd: number) => (r.cost_known ? `, ${formatCost(usd)}` : '')
  // what needs the operator comes first (SPEC 22.2)
  const needs = needsYouLine(r)
  if (needs) out.push(needs, '')
  out.push(`helix report: ${r.runs} run${r.runs === 1 ? '' : 's'}, ${spanText(r)}`)
  if (r.fleet) out.push(`  fleet: ${fleetText(r.fleet)}`)
  if (r.runs === 0) out.push(r.fleet ? `  nothing ran in this window (run records: refs/helix/runs/* on ${sanitize(r.fleet.remote)})` : '  nothing ran in this window (history: .helix-logs/runs.jsonl)')
  if (r.run_list.length) out.push('', 'Runs:')
  for (const run of r.run_list) {
    const who = [run.agent ? sanitize(run.agent) : 'agent ?', run.review_agent && run.review_agent !== run.agent ? `review ${sanitize(run.review_agent)}` : null, `${run.workers} worker${run.workers === 1 ? '' : 's'}`]
    out.push(`  ${localTime(run.started_at)} → ${hhmm(run.ended_at)}  ${who.filter(Boolean).join(', ')}${onHost(run.host)}`)
    out.push(`    cycles: ${run.completed} completed of ${run.attempted} attempted; ${formatTokens(run.tokens)} tokens${cost(run.cost_usd)}`)
    out.push(`    stopped: ${stopText(run)}`)
    if (run.log) out.push(`    log: ${sanitize(run.log)}`)
  }

  out.push('', `Closed (${r.closed.length}):`)
  for (const c of r.closed) {
    const commits = c.via === 'tracker' ? '  [closed with its children]' : c.commits.length ? `  [${c.commits.map((k) => sanitize(short(k))).join(', ')}]` : '  [no commits]'
    out.push(`  ${sanitize(c.id)}  ${sanitize(c.title)}${commits}${onHost(c.host)}`)
  }
  if (r.closed.length === 0) out.push('  none')

  // one block per bead, its attempts in order under it (not interleaved by time)
  const groups = failuresByBead(r.failures)
  out.push('', `Failures (${r.failures.length} on ${groups.length} bead${groups.length === 1 ? '' : 's'}):`)
  for (const g of groups) {
    out.push(`  ${sanitize(g.id)}${g.title ? ` — ${sanitize(g.title)}` : ''}`)
    for (const f of g.attempts) {
      out.push(`    ${failureText(f)}`)
      if (f.log) out.push(`      log: ${sanitize(f.log)} (cycle ${f.cycle})`)
    }
  }
  if (r.failures.length === 0) out.push('  none')

  out.push('', `Blocked (${r.blocked.length}):`)
  for (const b of r.blocked) {
    out.push(`  ${sanitize(b.id)}  ${sanitize(b.reason) || 'no reason recorded'} (${b.attempts} attempt${b.attempts === 1 ? '' : 's'})${b.title ? ` — ${sanitize(b.title)}` : ''}`)
  }
  if (r.blocked.length === 0) out.push('  none')

  out.push('', `Verdicts (${r.verdicts.length}):`)
  for (const v of r.verdicts) out.push(`  ${hhmm(v.at)}  ${v.kind}${v.bead ? ` of ${sanitize(v.bead)}` : ''}: ${sanitize(v.verdict)}`)
  if (r.verdicts.length === 0) out.push('  none recorded')

  if (r.pull_requests) {
    out.push('', `Pull requests awaiting merge (${r.pull_requests.length}):`)
    for (const p of r.pull_requests) out.push(`  ${sanitize(p.bead)}  ${sanitize(p.url)}  checks ${p.checks}, ${p.mergeable}${p.age_s !== null ? `, age ${prAge(p.age_s)}` : ''}${p.title ? ` — ${sanitize(p.title)}` : ''}`)
    if (r.pull_requests.length === 0) out.push('  none')
  }

  out.push('', `Left (${r.left.length}):`)
  for (const l of r.left) out.push(`  ${sanitize(l.id)}  ${sanitize(l.state)}${l.title ? ` — ${sanitize(l.title)}` : ''}`)
  if (r.left.length === 0) out.push('  nothing open in the tracker')

  if (r.beads.length) {
    out.push('', `Per bead:  attempts  time       tokens${r.cost_known ? '      cost' : ''}  outcome`)
    for (const b of r.beads) {
      const c = r.cost_known ? `  ${formatCost(b.cost_usd).padStart(8)}` : ''
      out.push(`  ${sanitize(b.id)}  ${String(b.attempts).padStart(3)}  ${formatMs(b.time_ms).padStart(9)}  ${formatTokens(b.tokens).padStart(11)}${c}  ${b.closed ? 'closed' : sanitize(b.last_outcome)}${b.title ? ` — ${sanitize(b.title)}` : ''}`)
    }
  }

  const t = r.totals
  out.push('')
  out.push(`Totals: ${t.cycles} cycle${t.cycles === 1 ? '' : 's'}, ${t.closed} closed, ${t.failed} failed; ${formatTokens(t.tokens)} tokens${cost(t.cost_usd)}`)
  out.push(`Time:   runs ${formatMs(t.run_ms)}, agents busy ${formatMs(t.agent_ms)}, paused ${formatMs(t.paused_ms)}, idle ${formatMs(t.idle_ms)}`)
  if (r.skipped_lines.length) out.push(`(skipped ${r.skipped_lines.length} unreadable line${r.skipped_lines.length === 1 ? '' : 's'} of runs.jsonl: ${r.skipped_lines.slice(0, 5).join(', ')}${r.skipped_lines.length > 5 ? ', …' : ''})`)
  return out.join('\n') + '\n'
}
