/**
 * `helix report --html FILE` (SPEC 16.5): one self-contained page. Inline CSS and
 * SVG only; no script, no font, no image, no URL: a Content-Security-Policy of
 * `default-src 'none'` (inline styles allowed) makes the browser refuse any
 * request the page might try, so it opens from a file with no network.
 *
 * - a timeline of cycles, one row per worker slot, bars coloured by outcome;
 * - a cumulative-beads-closed chart;
 * - the closed / failures / blocked / per-bead tables of the text report.
 * Every untrusted string is sanitized (control characters) and HTML-escaped.
 */
import {prAge} from '../operator/pr-status.js'
import {sanitize} from '../util/sanitize.js'
import {CLOSED_OUTCOMES, type Report} from './summary.js'
import {failuresByBead, fleetText, formatCost, formatMs, formatTokens, needsYouLine, spanText, stopText} from './text.js'

export const OUTCOME_COLORS: Record<string, string> = {
  COMPLETE: '#2e9e44',
  SALVAGED: '#7cc47f',
  DECOMPOSED: '#5b8def',
  FAILED: '#d9453b',
  NOT_COMPLETED: '#e8a33d',
  STALLED: '#a05fc9',
  TIMEOUT: '#8c4a2f',
  NOT_LANDED: '#e06fa8',
  DRIFT: '#7a7a7a',
}
const OTHER_COLOR = '#444444'

export function esc(text: unknown): string {
  return sanitize(text).replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!)
}

function colorOf(outcome: string): string {
  return OUTCOME_COLORS[outcome] ?? OTHER_COLOR
}

function cssClass(outcome: string): string {
  return 'o-' + outcome.toLowerCase().replace(/[^a-z0-9]+/g, '-')
}

function hhmm(ms: number): string {
  const d = new Date(ms)
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`
}

const STEPS_MS = [10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400].map((s) => s * 1000)

/**
 * A real time axis: ticks at round times (every 10 s … every day, the
 * smallest step giving at most 8 ticks), labelled HH:MM, or HH:MM:SS when the step is
 * under a minute, so no two labels read the same.
 */
export function axisTicks(t0: number, t1: number): Array<{t: number; label: string}> {
  const span = Math.max(1, t1 - t0)
  const step = STEPS_MS.find((s) => span / s <= 8) ?? STEPS_MS[STEPS_MS.length - 1]
  // round in local time: a 15-minute step lands on :00, :15 … of the operator's clock
  const offset = new Date(t0).getTimezoneOffset() * 60_000
  const first = Math.ceil((t0 - offset) / step) * step + offset
  const out: Array<{t: number; label: string}> = []
  for (let t = first; t <= t1; t += step) {
    const d = new Date(t)
    const p = (n: number) => String(n).padStart(2, '0')
    const clock = step < 60_000 ? `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}` : `${p(d.getHours())}:${p(d.getMinutes())}`
    // over most of a day the same clock time comes back: the date goes in front
    out.push({t, label: span > 20 * 3_600_000 ? `${p(d.getDate())}/${p(d.getMonth() + 1)} ${clock}` : clock})
  }
  return out
}

const W = 960
const LEFT = 56
const RIGHT = 16
const ROW = 30
const BAR = 20

/** The timeline SVG: one row per slot, one bar per cycle. */
export function timelineSvg(r: Report): string {
  const cycles = r.cycles
  if (cycles.length === 0) return '<p class="empty">No cycles in this window.</p>'
  const t0 = Math.min(...cycles.map((c) => Date.parse(c.started_at)))
  const t1 = Math.max(...cycles.map((c) => Date.parse(c.ended_at)), t0 + 1)
  // a fleet's night (several hosts): one row per host and slot, labelled `host w1`
  const fleet = new Set(cycles.map((c) => c.host ?? '')).size > 1
  const rowKey = (c: Report['cycles'][number]) => (fleet ? `${c.host ?? '?'} w${c.slot}` : `w${c.slot}`)
  const slots = [...new Set(cycles.map(rowKey))].sort((a, b) => a.localeCompare(b, 'en', {numeric: true}))
  const left = fleet ? 128 : LEFT
  const plot = W - left - RIGHT
  const x = (t: number) => left + Math.round(((t - t0) / (t1 - t0)) * plot)
  const height = slots.length * ROW + 28
  const parts: string[] = []
  parts.push(`<svg id="timeline" class="chart" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" role="img" aria-label="Timeline of cycles per worker slot" shape-rendering="crispEdges">`)
  slots.forEach((slot, i) => {
    const y = i * ROW
    parts.push(`<text class="slot-label" x="4" y="${y + ROW / 2 + 4}">${esc(slot.length > 18 ? `${slot.slice(0, 17)}…` : slot)}</text>`)
    parts.push(`<line class="grid" x1="${left}" x2="${W - RIGHT}" y1="${y + ROW - 1}" y2="${y + ROW - 1}"/>`)
  })
  // vertical grid lines at the ticks, under the bars (drawn first)
  const ticks = axisTicks(t0, t1)
  for (const tk of ticks) parts.push(`<line class="grid tick-line" x1="${x(tk.t)}" x2="${x(tk.t)}" y1="0" y2="${slots.length * ROW}"/>`)
  for (const c of cycles) {
    const row = slots.indexOf(rowKey(c))
    const xs = x(Date.parse(c.started_at))
    // at least 3 px wide, and a 1 px gap to the next bar so adjacent cycles stay countable
    const w = Math.max(3, x(Date.parse(c.ended_at)) - xs - 1)
    const tip = `${c.bead} — ${c.title || '(no title)'} — ${c.outcome}${c.reason ? ` (${c.reason})` : ''} — ${formatMs(c.duration_ms)}`
    parts.push(
      `<rect class="bar ${cssClass(c.outcome)}" data-outcome="${esc(c.outcome)}" data-bead="${esc(c.bead)}" x="${xs}" y="${row * ROW + (ROW - BAR) / 2}" width="${w}" height="${BAR}" fill="${colorOf(c.outcome)}"><title>${esc(tip)}</title></rect>`,
    )
  }
  const axisY = slots.length * ROW + 16
  for (const tk of ticks) {
    parts.push(`<text class="tick" x="${x(tk.t)}" y="${axisY}" text-anchor="middle">${tk.label}</text>`)
  }
  parts.push('</svg>')
  return parts.join('\n')
}

/** The chart's points: the report's closed beads (cycles' and the tracker's), else the closing cycles, by time. */
function closedPoints(r: Report): Array<{bead: string; title: string; ended_at: string}> {
  const fromList = r.closed.map((c) => ({bead: c.id, title: c.title, ended_at: c.closed_at}))
  const fromCycles = r.cycles.filter((c) => CLOSED_OUTCOMES.has(c.outcome)).map((c) => ({bead: c.bead, title: c.title, ended_at: c.ended_at}))
  // a Report built by hand (the dashboard's live one) may carry cycles without the closed list
  return (fromList.length >= fromCycles.length ? fromList : fromCycles).sort((a, b) => Date.parse(a.ended_at) - Date.parse(b.ended_at))
}

/** The cumulative closed-beads chart: a step line and one point per closed bead. */
export function cumulativeSvg(r: Report): string {
  // every closed bead the headline counts, an epic closed with its children included
  const closed = closedPoints(r)
  if (closed.length === 0) return '<p class="empty">No bead was closed in this window.</p>'
  const H = 220
  const top = 12
  const bottom = 28
  const t0 = Math.min(...r.cycles.map((c) => Date.parse(c.started_at)), ...closed.map((c) => Date.parse(c.ended_at)))
  const t1 = Math.max(...r.cycles.map((c) => Date.parse(c.ended_at)), ...closed.map((c) => Date.parse(c.ended_at)), t0 + 1)
  const plot = W - LEFT - RIGHT
  const x = (t: number) => LEFT + Math.round(((t - t0) / (t1 - t0)) * plot)
  const y = (n: number) => top + Math.round((1 - n / closed.length) * (H - top - bottom))
  let d = `M ${x(t0)} ${y(0)}`
  const points: string[] = []
  closed.forEach((c, i) => {
    const xi = x(Date.parse(c.ended_at))
    d += ` H ${xi} V ${y(i + 1)}`
    points.push(`<circle class="cum-point" cx="${xi}" cy="${y(i + 1)}" r="4"><title>${esc(`${i + 1}: ${c.bead} — ${c.title} at ${hhmm(Date.parse(c.ended_at))}`)}</title></circle>`)
  })
  d += ` H ${x(t1)}`
  return [
    `<svg id="cumulative" class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="Beads closed over time">`,
    `<line class="axis" x1="${LEFT}" x2="${W - RIGHT}" y1="${y(0)}" y2="${y(0)}"/>`,
    `<line class="axis" x1="${LEFT}" x2="${LEFT}" y1="${top}" y2="${y(0)}"/>`,
    `<text class="tick" x="${LEFT - 6}" y="${y(0) + 4}" text-anchor="end">0</text>`,
    `<text class="tick" x="${LEFT - 6}" y="${y(closed.length) + 4}" text-anchor="end">${closed.length}</text>`,
    `<text class="tick" x="${LEFT}" y="${H - 8}" text-anchor="start">${hhmm(t0)}</text>`,
    `<text class="tick" x="${W - RIGHT}" y="${H - 8}" text-anchor="end">${hhmm(t1)}</text>`,
    `<path class="cum-line" d="${d}"/>`,
    ...points,
    '</svg>',
  ].join('\n')
}

function table(head: string[], rows: string[][]): string {
  if (rows.length === 0) return '<p class="empty">none</p>'
  return `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>\n${rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n')}\n</tbody></table>`
}

const CSS = `
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;background:#fff;max-width:1000px}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px}
.muted{color:#666} .empty{color:#888;font-style:italic}
.totals{display:flex;gap:24px;flex-wrap:wrap;margin:12px 0}
.totals div{background:#f4f4f4;padding:8px 12px;border-radius:6px} .totals b{display:block;font-size:18px}
table{border-collapse:collapse;width:100%} th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #e4e4e4;vertical-align:top}
th{background:#fafafa;font-weight:600} td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,monospace}
.chart text{font:11px ui-monospace,monospace;fill:#555}
.chart .grid{stroke:#eee} .chart .axis{stroke:#999}
.cum-line{fill:none;stroke:#2e9e44;stroke-width:2} .cum-point{fill:#2e9e44}
.legend{display:flex;gap:12px;flex-wrap:wrap;margin:6px 0 10px;font-size:12px}
.legend span{display:inline-flex;align-items:center;gap:4px} .legend i{display:inline-block;width:12px;height:12px;border-radius:2px}
`

export function renderReportHtml(r: Report): string {
  const t = r.totals
  const used = [...new Set(r.cycles.map((c) => c.outcome))]
  const legend = used.map((o) => `<span><i style="background:${colorOf(o)}"></i>${esc(o)}</span>`).join('')
  const closedRows = r.closed.map((c) => [`<code>${esc(c.id)}</code>${c.host ? ` <span class="muted">on ${esc(c.host)}</span>` : ''}`, esc(c.title), c.commits.length ? c.commits.map((k) => `<code>${esc(k.slice(0, 12))}</code>`).join(' ') : '<span class="muted">no commits</span>', esc(hhmm(Date.parse(c.closed_at)))])
  // grouped by bead: a bead's attempts together, its id and title on its first row only
  const failRows = failuresByBead(r.failures).flatMap((g) => g.attempts).map((f, i, all) => [
    i > 0 && all[i - 1].id === f.id ? '' : `<code>${esc(f.id)}</code>`,
    i > 0 && all[i - 1].id === f.id ? '' : esc(f.title),
    String(f.attempt),
    esc(hhmm(Date.parse(f.at))),
    esc(f.outcome),
    esc(f.reason ?? ''),
    f.later_closed ? `closed on attempt ${f.later_closed.attempt}` : '<span class="muted">not closed</span>',
    f.log ? `<code>${esc(f.log)}</code> cycle ${f.cycle}` : '',
  ])
  const runRows = r.run_list.map((run) => [
    esc(hhmm(Date.parse(run.started_at))),
    esc(hhmm(Date.parse(run.ended_at))),
    `<code>${esc(run.agent ?? '?')}</code>`,
    `<code>${esc(run.review_agent ?? '')}</code>`,
    String(run.workers),
    `${run.completed} of ${run.attempted}`,
    esc(stopText(run)),
    run.log ? `<code>${esc(run.log)}</code>` : '',
  ])
  const verdictRows = r.verdicts.map((v) => [esc(hhmm(Date.parse(v.at))), v.kind, v.bead ? `<code>${esc(v.bead)}</code>` : '', esc(v.verdict)])
  const leftRows = r.left.map((l) => [`<code>${esc(l.id)}</code>`, esc(l.title), esc(l.state)])
  const blockRows = r.blocked.map((b) => [`<code>${esc(b.id)}</code>`, esc(b.title), esc(b.reason), String(b.attempts)])
  const beadRows = r.beads.map((b) => [
    `<code>${esc(b.id)}</code>`,
    esc(b.title),
    String(b.attempts),
    esc(formatMs(b.time_ms)),
    formatTokens(b.tokens),
    ...(r.cost_known ? [formatCost(b.cost_usd)] : []),
    b.closed ? 'closed' : esc(b.last_outcome),
  ])
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>helix report</title>
<style>${CSS}</style>
</head>
<body>
<h1>helix report</h1>
${needsYouLine(r) ? `<p id="needs-you"><b>${esc(needsYouLine(r) ?? '')}</b></p>\n` : ''}<p class="muted" id="span">${r.runs} run${r.runs === 1 ? '' : 's'}, ${esc(spanText(r))}</p>${r.fleet ? `\n<p class="muted" id="fleet">fleet: ${esc(fleetText(r.fleet))}</p>` : ''}
<div class="totals">
<div><b id="total-closed">${t.closed}</b>beads closed</div>
<div><b>${t.failed}</b>failed cycles</div>
<div><b>${r.blocked.length}</b>blocked</div>
<div><b>${formatTokens(t.tokens)}</b>tokens</div>
${r.cost_known ? `<div><b>${formatCost(t.cost_usd)}</b>cost</div>\n` : ''}<div><b>${esc(formatMs(t.agent_ms))}</b>agents busy</div>
<div><b>${esc(formatMs(t.paused_ms))}</b>paused</div>
<div><b>${esc(formatMs(t.idle_ms))}</b>idle</div>
</div>
<h2>Timeline of cycles per slot</h2>
<div class="legend">${legend}</div>
${timelineSvg(r)}
<h2>Beads closed over time</h2>
${cumulativeSvg(r)}
<h2>Runs (${r.run_list.length})</h2>
<div id="runs">${table(['started', 'ended', 'agent', 'review agent', 'workers', 'cycles completed of attempted', 'stopped', 'log'], runRows)}</div>
<h2>Closed (${r.closed.length})</h2>
${table(['bead', 'title', 'commits', 'at'], closedRows)}
<h2>Failures (${r.failures.length})</h2>
<div id="failures">${table(['bead', 'title', 'attempt', 'at', 'outcome', 'reason', 'later', 'log'], failRows)}</div>
<h2>Blocked (${r.blocked.length})</h2>
${table(['bead', 'title', 'reason', 'attempts'], blockRows)}
<h2>Verdicts (${r.verdicts.length})</h2>
<div id="verdicts">${table(['at', 'action', 'bead', 'verdict'], verdictRows)}</div>
${r.pull_requests ? `<h2>Pull requests awaiting merge (${r.pull_requests.length})</h2>
<div id="pull-requests">${table(['bead', 'title', 'pull request', 'age', 'checks', 'mergeable'], r.pull_requests.map((p) => [`<code>${esc(p.bead)}</code>`, esc(p.title), /^https?:\/\//.test(p.url) ? `<a href="${esc(p.url)}" rel="noopener noreferrer">${esc(p.url)}</a>` : esc(p.url), p.age_s === null ? '' : esc(prAge(p.age_s)), esc(p.checks), esc(p.mergeable)]))}</div>
` : ''}<h2>Left (${r.left.length})</h2>
<div id="left">${r.left.length ? table(['bead', 'title', 'state'], leftRows) : '<p class="empty">nothing open in the tracker</p>'}</div>
<h2>Per bead</h2>
${table(['bead', 'title', 'attempts', 'time', 'tokens', ...(r.cost_known ? ['cost'] : []), 'outcome'], beadRows)}
</body>
</html>
`
}
