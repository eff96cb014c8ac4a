// Hosts of a SPEC 19 fleet as real `helix run --remote origin` processes, and the
// invariants of 19.6 checked on the bare remote afterwards.
import type {ChildProcess} from 'node:child_process'
import {readFileSync, existsSync, symlinkSync} from 'node:fs'
import path from 'node:path'
import {BIN, startCli} from '../support/cli.js'
import {GIT_ISOLATION} from '../support/git.js'
import {waitFor} from '../support/wait.js'
import {g, type Fleet} from './helpers.js'

export {BIN}
export const AGENT = path.resolve(import.meta.dirname, 'fleet-agent.sh')

export interface HostRun {
  child: ChildProcess
  out: () => string
  done: Promise<number | null>
}

/** a clone whose origin points through a symlink (the test removes it to cut the host off) */
export function cloneBehindLink(f: Fleet, name: string): {dir: string; link: string} {
  const dir = f.clone(name)
  const link = path.join(f.dir, `link-${name}.git`)
  symlinkSync(f.bare, link)
  g(dir, 'remote', 'set-url', 'origin', link)
  return {dir, link}
}

export function startHost(dir: string, name: string, log: string, args: string[], env: NodeJS.ProcessEnv = {}): HostRun {
  const e: NodeJS.ProcessEnv = {...GIT_ISOLATION, HELIX_HOST: name, FLEET_LOG: log, FLEET_HELIX: BIN, HELIX_LEASE_SKEW: '5', ...env}
  const c = startCli(['run', '--remote', 'origin', '--agent', AGENT, '--no-auto-review', '--review-every', '0', '--summary', ...args], {cwd: dir, env: e, detached: true, stdin: 'ignore'})
  return {child: c.child, out: () => c.output, done: c.done.then((r) => r.code)}
}

export interface AgentEvent {
  event: 'start' | 'end' | 'stopped'
  host: string
  bead: string
  pid: number
  t: number
}

export function events(log: string): AgentEvent[] {
  if (!existsSync(log)) return []
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AgentEvent)
}

export function tipBeads(bare: string): Array<Record<string, unknown>> {
  return g(bare, 'show', 'main:.ddx/beads.jsonl')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

/**
 * SPEC 19.6 afterwards: every bead closed once at the tip, each bead's work commit
 * on the base once, no claim ref left, and no two hosts' agents on one bead at once
 * (an agent killed without a last word counts as working until its host's lease
 * would have ended). Returns the problems found (empty: all hold).
 */
export function fleetProblems(bare: string, ids: string[], log: string, leaseMs: number): string[] {
  const problems: string[] = []
  const beads = tipBeads(bare)
  for (const id of ids) {
    const rows = beads.filter((b) => b.id === id)
    if (rows.length !== 1) problems.push(`${id}: ${rows.length} tracker lines`)
    else if (rows[0]?.status !== 'closed') problems.push(`${id}: ${String(rows[0]?.status)} at the tip`)
    if (rows.some((b) => Object.keys(b).some((k) => k.startsWith('claim')))) problems.push(`${id}: a claim field reached the base`)
  }
  const subjects = g(bare, 'log', '--format=%s', 'main').split('\n')
  for (const id of ids) {
    const n = subjects.filter((s) => s === `work on ${id}`).length
    if (n !== 1) problems.push(`${id}: its work is on the base ${n} times`)
  }
  const claims = g(bare, 'for-each-ref', '--format=%(refname)', 'refs/helix/claims/').split('\n').filter(Boolean)
  if (claims.length) problems.push(`claim refs left: ${claims.join(', ')}`)
  const ev = events(log)
  const spans = new Map<number, {host: string; bead: string; from: number; to: number}>()
  for (const e of ev) {
    if (e.event === 'start') spans.set(e.pid, {host: e.host, bead: e.bead, from: e.t, to: e.t + leaseMs})
    else {
      const s = spans.get(e.pid)
      if (s) s.to = e.t
    }
  }
  const list = [...spans.values()]
  for (const a of list)
    for (const b of list)
      if (a !== b && a.bead === b.bead && a.host !== b.host && a.from < b.from && b.from < a.to)
        problems.push(`${a.bead}: ${b.host} started at ${b.from} while ${a.host} worked it (${a.from}–${a.to})`)
  return problems
}

/** the rig's waitFor under the fleet tests' old name */
export async function until(fn: () => boolean, ms: number, what: string): Promise<void> {
  await waitFor(fn, {timeoutMs: ms, intervalMs: 100, what})
}
