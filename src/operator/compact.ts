/**
 * `helix status` below 60 columns: the README's `tmux split-window -h` in an
 * 80-column terminal gives a 39-column pane, where the wide layout's lines wrap and the
 * header scrolls away. Same facts, short labels, one fact per line, every line cut to
 * the width, never more rows than the pane.
 */
import type {StatusModel} from './model.js'
import {sanitize} from '../util/sanitize.js'
import {beadProgress, clockTime, configSummary, cyclesLine, formatAge, relative, secondsBetween, truncate} from './text.js'
import {groupDigits} from '../util/numbers.js'

export const COMPACT_BELOW = 60

export function renderCompact(m: StatusModel, opts: {width?: number; height?: number} = {}): string {
  const width = Math.max(20, opts.width ?? 39)
  const height = Math.max(10, opts.height ?? 24)
  const t = m.tracker
  const b = m.beads
  const head: string[] = [
    `Beads: ${b.closed}/${b.total} closed, ${b.left} left`,
    `Ready ${t.ready} · Blocked ${b.blocked} · Waiting ${b.waiting}`,
  ]
  if (t.in_progress > 0) head.push(`In progress: ${t.in_progress}`)

  const run: string[] = []
  if (m.active) {
    const age = m.progress?.elapsed_s ?? secondsBetween(m.active.started, m.now)
    run.push(`Run: pid ${m.active.pid}, ${age !== null && age >= 0 ? `${formatAge(age)} elapsed` : 'started ?'}`)
    if (m.progress) {
      const p = m.progress
      const eta = beadProgress(m).split(', ').find((part) => part.startsWith('ETA'))
      run.push(`Cycle ${m.current_cycle ?? '?'}${m.in_flight.length > 1 ? ` · ${m.in_flight.length} busy` : ''}${eta ? ` · ${eta}` : ''}`)
      run.push(`Cycles: ${cyclesLine(p)}`)
      const cost = p.cost_usd !== null && p.cost_usd > 0 ? `, $${p.cost_usd.toFixed(2)}` : ''
      const mean = p.mean_cycle_s !== null ? `, mean ${formatAge(p.mean_cycle_s)}` : ''
      run.push(`${groupDigits(p.tokens)} tokens${cost}${mean}`)
    }
    if (m.paused_until) run.push(`Paused: ${sanitize((m.pause_reason || 'quota').split(':')[0].trim() || 'quota')}, ${relative(m.paused_until, m.now)} (${clockTime(m.paused_until)})`)
    if (m.focused_epic) run.push(`Epic: ${sanitize(m.focused_epic.id)}`)
    for (const w of m.in_flight) {
      const of = w.timeout_s ? `/${formatAge(w.timeout_s)}` : ''
      run.push(`${m.in_flight.length > 1 ? `w${w.slot} ` : ''}${sanitize(w.bead)} ${formatAge(w.elapsed_s)}${of}`)
      if (w.title) run.push(`  ${sanitize(w.title)}`)
      if (w.last_output) run.push(`  » ${sanitize(w.last_output)}`)
    }
  } else {
    const cfg = configSummary(m.config)
    run.push(m.stalePid !== null ? `Run: none (stale pid ${m.stalePid} removed)` : 'Run: none')
    if (cfg) run.push(`Next: ${cfg}`)
  }

  const last: string[] = []
  if (m.lastRun) {
    const r = m.lastRun
    const ago = secondsBetween(r.ended_at, m.now)
    last.push(`Last run: ${r.stop_reason ? sanitize(r.stop_reason) : 'no stop recorded'}${ago !== null && ago >= 0 ? `, ${formatAge(ago)} ago` : ''}`)
    if (r.stop_message) last.push(`  ${sanitize(r.stop_message)}`)
    last.push(`  ${r.completed_cycles} of ${r.attempted_cycles} cycles completed`)
  } else if (m.runStateProblem && !m.active) {
    last.push('Last run: unknown', `  run-state ${sanitize(m.runStateProblem)}`)
  }

  const shownAbove = new Set(m.in_flight.map((w) => w.bead))
  const claimed = m.claimed.filter((c) => !shownAbove.has(c.id)).map((c) => `  ${sanitize(c.id)}${c.live ? '' : ' (stale)'} ${sanitize(c.title)}`)
  const parked = m.parked.map((p) => {
    const short = p.kind === 'backoff' ? `retry ${p.next_eligible ? relative(p.next_eligible, m.now) : ''}`.trim() : p.kind === 'skipped' ? 'skipped' : sanitize(p.reason)
    return `  ${sanitize(p.id)} ${short}`
  })

  // the fixed parts first; the lists share what is left of the pane
  let room = height - head.length - run.length - last.length
  const list = (title: string, rows: string[]): string[] => {
    if (rows.length === 0 || room <= 0) return []
    const take = Math.min(rows.length, Math.max(0, room - 1))
    if (take <= 0) return []
    const out = [`${title} ${rows.length}`]
    if (take < rows.length) out.push(...rows.slice(0, Math.max(0, take - 1)), `  … and ${rows.length - Math.max(0, take - 1)} more`)
    else out.push(...rows)
    room -= out.length
    return out
  }
  const lines = [...head, ...run, ...list('Claimed:', claimed), ...list('Parked:', parked), ...last]
  return lines.slice(0, height).map((l) => truncate(l, width)).join('\n') + '\n'
}
