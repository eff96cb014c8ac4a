/** Text form of `helix report` (SPEC 16.5): what happened, for an operator over coffee. */
import {sanitize} from '../util/sanitize.js'
import {formatAge} from '../status/text.js'
import type {Report} from './history.js'

export function formatMs(ms: number): string {
  return formatAge(Math.round(ms / 1000))
}

export function formatTokens(n: number): string {
  return n.toLocaleString('en-US')
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

export function renderReportText(r: Report): string {
  const out: string[] = []
  out.push(`helix report: ${r.runs} run${r.runs === 1 ? '' : 's'} since ${localTime(r.since)}`)
  if (r.runs === 0) {
    out.push('  nothing ran in this window (history: .helix-logs/runs.jsonl)')
  }
  for (const run of r.run_list) {
    const stop = run.stop_reason ? sanitize(run.stop_reason) : 'no stop reason'
    out.push(`  ${localTime(run.started_at)} → ${localTime(run.ended_at)}  ${run.completed}/${run.attempted} completed, ${stop}${run.agent ? `, ${sanitize(run.agent)}` : ''}${run.workers > 1 ? `, ${run.workers} workers` : ''}`)
  }

  out.push('', `Closed (${r.closed.length}):`)
  for (const c of r.closed) {
    const commits = c.commits.length ? `  [${c.commits.map((k) => sanitize(short(k))).join(', ')}]` : '  [no commits]'
    out.push(`  ${sanitize(c.id)}  ${sanitize(c.title)}${commits}`)
  }
  if (r.closed.length === 0) out.push('  none')

  out.push('', `Failures (${r.failures.length}):`)
  for (const f of r.failures) {
    out.push(`  ${sanitize(f.id)}  ${sanitize(f.outcome)}${f.reason ? ` (${sanitize(f.reason)})` : ''}${f.title ? ` — ${sanitize(f.title)}` : ''}`)
  }
  if (r.failures.length === 0) out.push('  none')

  out.push('', `Blocked (${r.blocked.length}):`)
  for (const b of r.blocked) {
    out.push(`  ${sanitize(b.id)}  ${sanitize(b.reason) || 'no reason recorded'} (${b.attempts} attempt${b.attempts === 1 ? '' : 's'})${b.title ? ` — ${sanitize(b.title)}` : ''}`)
  }
  if (r.blocked.length === 0) out.push('  none')

  if (r.beads.length) {
    out.push('', 'Per bead:  attempts  time       tokens      cost  outcome')
    for (const b of r.beads) {
      out.push(`  ${sanitize(b.id)}  ${String(b.attempts).padStart(3)}  ${formatMs(b.time_ms).padStart(9)}  ${formatTokens(b.tokens).padStart(11)}  ${formatCost(b.cost_usd).padStart(8)}  ${b.closed ? 'closed' : sanitize(b.last_outcome)}${b.title ? ` — ${sanitize(b.title)}` : ''}`)
    }
  }

  const t = r.totals
  out.push('')
  out.push(`Totals: ${t.cycles} cycle${t.cycles === 1 ? '' : 's'}, ${t.closed} closed, ${t.failed} failed; ${formatTokens(t.tokens)} tokens, ${formatCost(t.cost_usd)}`)
  out.push(`Time:   runs ${formatMs(t.run_ms)}, agents busy ${formatMs(t.agent_ms)}, paused ${formatMs(t.paused_ms)}, idle ${formatMs(t.idle_ms)}`)
  if (r.skipped_lines.length) out.push(`(skipped ${r.skipped_lines.length} unreadable line${r.skipped_lines.length === 1 ? '' : 's'} of runs.jsonl: ${r.skipped_lines.slice(0, 5).join(', ')}${r.skipped_lines.length > 5 ? ', …' : ''})`)
  return out.join('\n') + '\n'
}
