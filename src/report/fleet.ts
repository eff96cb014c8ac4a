/**
 * `helix report --remote <name>` (SPEC 22.2): the whole fleet's night, read from the
 * remote. Every host's run records (`refs/helix/runs/<host>`, pushed at the end of
 * each `--remote` run) make one history, each run attributed to its host; the queue
 * at the fetched base tip gives titles, what is left and what needs the operator;
 * the base's landing commits (`helix(<host>): tracker of <id> …`) attribute a bead
 * closed there whose host has not pushed its records yet.
 */
import {git, gitEnv} from '../git/run.js'
import {readRunRecords, type HostRecords} from '../remote/run-records.js'
import {parseTracker} from '../tracker/codec.js'
import type {TrackerSnapshot} from '../tracker/types.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {parseHistory, type History, type Report} from './summary.js'

export interface FleetRead {
  remote: string
  base: string
  tip: string
  history: History
  hosts: Array<{host: string; runs: number}>
  snap: TrackerSnapshot | null
  /** bead → the host whose landing commit closed it, and when (newest landing wins) */
  landings: Map<string, {host: string; sha: string; at: string}>
}

/** Every host's records as one history: a record without a host gets its ref's. */
export function fleetHistory(records: HostRecords[]): {history: History; hosts: FleetRead['hosts']} {
  const runs: History['runs'] = []
  const skipped: number[] = []
  const hosts: FleetRead['hosts'] = []
  const seen = new Set<string>()
  for (const h of records) {
    const one = parseHistory(h.text)
    let n = 0
    for (const r of one.runs) {
      const host = r.host ?? h.host
      // the same run pushed under two names (a host renamed by HELIX_HOST) counts once
      const key = `${host}\u0000${r.started_at}`
      if (seen.has(key)) continue
      seen.add(key)
      runs.push({...r, host})
      n++
    }
    skipped.push(...one.skipped_lines)
    hosts.push({host: h.host, runs: n})
  }
  return {history: {runs, skipped_lines: skipped}, hosts}
}

const LANDING = /^helix\(([^)\s]{1,100})\): (?:tracker of|close) ([A-Za-z0-9][A-Za-z0-9._-]{0,99})\b/

/** `git log` subjects of the base as bead → landing host (the newest landing of a bead wins). */
export function parseLandings(log: string): FleetRead['landings'] {
  const out: FleetRead['landings'] = new Map()
  // git log lists newest first: the first landing seen of a bead is its last one
  for (const line of log.split('\n')) {
    const [sha = '', ct = '', subject = ''] = line.split('\t')
    const m = LANDING.exec(subject)
    if (!m || out.has(m[2] as string)) continue
    out.set(m[2] as string, {host: m[1] as string, sha, at: new Date(Number(ct) * 1000).toISOString()})
  }
  return out
}

/** Fetches the base and every host's records; one line and exit 1 when the remote is unknown or away. */
export async function readFleet(opts: {root: string; remote: string; env: NodeJS.ProcessEnv; since: Date}): Promise<FleetRead> {
  const env = gitEnv(opts.env, {name: 'helix', email: 'helix@localhost'})
  const run = (args: string[]) => git(args, {cwd: opts.root, env})
  const name = opts.remote.trim()
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name) || (await run(['remote', 'get-url', name])).code !== 0)
    throw new HelixError(`helix report: --remote ${sanitize(opts.remote)}: no such git remote here (see 'git remote -v')`, EXIT.ERROR)
  const head = await run(['symbolic-ref', '-q', '--short', 'HEAD'])
  if (head.code !== 0) throw new HelixError(`helix report: --remote needs a checkout on a branch (the base); HEAD is detached`, EXIT.ERROR)
  const base = head.stdout.trim()
  const prefix = (await run(['rev-parse', '--show-prefix'])).stdout.trim()
  const f = await run(['fetch', '-q', '--no-tags', '--no-write-fetch-head', name, `+refs/heads/${base}:refs/remotes/${name}/${base}`])
  if (f.code !== 0) throw new HelixError(`helix report: --remote ${sanitize(name)}: cannot fetch ${sanitize(base)} (unreachable, or no such branch there)`, EXIT.ERROR)
  const tip = (await run(['rev-parse', `refs/remotes/${name}/${base}`])).stdout.trim()
  const records = await readRunRecords({cwd: opts.root, remote: name, env: opts.env, scratch: ''})
  if (!records) throw new HelixError(`helix report: --remote ${sanitize(name)}: cannot read the run records (refs/helix/runs/*) from it`, EXIT.ERROR)
  const {history, hosts} = fleetHistory(records)
  const text = await run(['cat-file', 'blob', `${tip}:${prefix}.ddx/beads.jsonl`])
  let snap: TrackerSnapshot | null = null
  try {
    snap = text.code === 0 ? parseTracker(text.stdout, `${name}/${base}`) : null
  } catch {
    snap = null // a broken queue: the report still tells the runs
  }
  const log = await run(['log', '--format=%H%x09%ct%x09%s', `--since=${opts.since.toISOString()}`, tip])
  return {remote: name, base, tip, history, hosts, snap, landings: log.code === 0 ? parseLandings(log.stdout) : new Map()}
}

/**
 * The report's closed list with every bead attributed: a closed bead without a host
 * takes its landing commit's, and a bead closed at the tip within the window that no
 * record names (its host has not pushed yet) is added from its landing commit.
 */
export function attributeClosed(r: Report, fleet: Pick<FleetRead, 'snap' | 'landings'>, since: Date): void {
  for (const c of r.closed) {
    const l = fleet.landings.get(c.id)
    if (!c.host && l) c.host = l.host
  }
  if (!fleet.snap) return
  const seen = new Set(r.closed.map((c) => c.id))
  const extra: Report['closed'] = []
  for (const [id, l] of fleet.landings) {
    const b = fleet.snap.byId.get(id)
    if (seen.has(id) || !b || b.status !== 'closed' || Date.parse(l.at) < since.getTime()) continue
    extra.push({id, title: typeof b.title === 'string' ? b.title : '', commits: [], closed_at: l.at, via: 'tracker', host: l.host})
  }
  if (extra.length === 0) return
  r.closed = [...r.closed, ...extra].sort((a, b) => Date.parse(a.closed_at) - Date.parse(b.closed_at))
  r.totals.closed += extra.length
}
