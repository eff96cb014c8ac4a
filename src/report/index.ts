/** `helix report` body: reads `.helix-logs/runs.jsonl`, summarises the window, renders. */
import {statSync} from 'node:fs'
import path from 'node:path'
import {atomicWrite} from '../util/atomic-write.js'
import {projectPaths} from '../util/root.js'
import {HelixError, fsErrorWords, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {buildReport, DEFAULT_SINCE, parseSince, readHistory, type Report} from './summary.js'
import {closedWithoutCycle, leftInTracker, needsYou, readVerdicts} from './facts.js'
import {readTracker} from '../tracker/store.js'
import type {TrackerSnapshot} from '../tracker/types.js'

export interface ReportOptions {
  cwd?: string
  env?: NodeJS.ProcessEnv
  now?: Date
  since?: string
  json?: boolean
  html?: string
  /** SPEC 22.2: the whole fleet's runs, read from this git remote (report/fleet.ts) */
  remote?: string
}

export function historyFile(logDir: string): string {
  return path.join(logDir, 'runs.jsonl')
}

export async function reportModel(opts: ReportOptions = {}): Promise<Report> {
  const now = opts.now ?? new Date()
  // bad input first: nothing is read or written before the flags are known good
  const since = parseSince(opts.since ?? DEFAULT_SINCE, now)
  const paths = projectPaths(opts.cwd ?? process.cwd(), opts.env ?? process.env)
  if (opts.remote !== undefined) return fleetReport(paths.root, opts.remote, opts.env ?? process.env, since, now)
  const r = buildReport(readHistory(historyFile(paths.logDir)), since, now)
  // verdicts from the session logs, what is left, closures without a cycle (an epic's)
  r.verdicts = readVerdicts(r.run_list.map((run) => run.log))
  let snap: TrackerSnapshot | null = null
  try {
    snap = await readTracker(paths.file)
  } catch {
    snap = null // a broken tracker: the report still tells the history
  }
  if (snap) {
    r.left = leftInTracker(snap)
    const extra = closedWithoutCycle(snap, r)
    if (extra.length) {
      r.closed = [...r.closed, ...extra].sort((a, b) => Date.parse(a.closed_at) - Date.parse(b.closed_at))
      r.totals.closed += extra.length
    }
  }
  r.needs_you = needsYou(r)
  // SPEC 20.5: pull requests (the last --land pr look's, refreshed at most once a minute each)
  const {localPrRows, prNeedsYou} = await import('../operator/pr-status.js')
  const prs = await localPrRows(paths.root, opts.env ?? process.env, now, (id) => String(snap?.byId.get(id)?.title ?? ''))
  if (prs) {
    r.pull_requests = prs
    const named = new Set(r.needs_you.map((n) => n.id))
    for (const n of prNeedsYou(prs)) if (!named.has(n.id)) r.needs_you.push({id: n.id, title: String(snap?.byId.get(n.id)?.title ?? ''), why: n.why})
  }
  return r
}

/** `report --remote`: every host's records from the remote, the queue at the fetched base tip. */
async function fleetReport(root: string, remote: string, env: NodeJS.ProcessEnv, since: Date, now: Date): Promise<Report> {
  const {readFleet, attributeClosed} = await import('./fleet.js')
  const fleet = await readFleet({root, remote, env, since})
  const r = buildReport(fleet.history, since, now)
  // the session logs of this host's runs are here; another host's are not (nothing is read then)
  r.verdicts = readVerdicts(r.run_list.map((run) => run.log))
  if (fleet.snap) {
    r.left = leftInTracker(fleet.snap)
    const extra = closedWithoutCycle(fleet.snap, r)
    if (extra.length) {
      r.closed = [...r.closed, ...extra].sort((a, b) => Date.parse(a.closed_at) - Date.parse(b.closed_at))
      r.totals.closed += extra.length
    }
  }
  attributeClosed(r, fleet, since)
  r.needs_you = needsYou(r)
  r.fleet = {remote: fleet.remote, base: fleet.base, tip: fleet.tip, hosts: fleet.hosts}
  return r
}

/** Writes `text` to `file` atomically (util/atomic-write), so a failed write leaves no half page. */
async function writePage(file: string, text: string): Promise<void> {
  const abs = path.resolve(file)
  try {
    if (statSync(abs).isDirectory()) throw new HelixError(`--html ${sanitize(file)} is a directory`, EXIT.ERROR)
  } catch (error) {
    // anything but our own refusal (no such file yet, an unreadable parent) is for the write below to report
    if (error instanceof HelixError) throw error
  }
  try {
    await atomicWrite(abs, text)
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? `the directory ${path.dirname(abs)} does not exist` : fsErrorWords(error)
    throw new HelixError(`cannot write --html ${sanitize(file)}: ${sanitize(why)}`, EXIT.ERROR)
  }
}

/** stdout text of `helix report`. */
export async function reportOutput(opts: ReportOptions = {}): Promise<string> {
  const r = await reportModel(opts)
  if (opts.html !== undefined) {
    if (opts.html.trim() === '') throw new HelixError('--html needs a file name', EXIT.ERROR)
    const {renderReportHtml} = await import('./html.js')
    // `--html -` (and a bare `--html`): the page on stdout, for `helix report --html > report.html`
    if (opts.html === '-') return renderReportHtml(r)
    await writePage(opts.html, renderReportHtml(r))
    return opts.json ? JSON.stringify(r, null, 2) + '\n' : `wrote ${sanitize(opts.html)} (${r.runs} run${r.runs === 1 ? '' : 's'}, ${r.totals.cycles} cycles, ${r.totals.closed} closed)\n`
  }
  if (opts.json) return JSON.stringify(r, null, 2) + '\n'
  const {renderReportText} = await import('./text.js')
  return renderReportText(r)
}
