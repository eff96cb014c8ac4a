/**
 * `helix doctor --remote <name>` (SPEC 19.1): the remote answers, and this host's clock
 * agrees with the others' within 30 s (leases allow 60 s of skew before a takeover).
 * git carries no server time, so two witnesses of another clock are used:
 *  - an http(s) remote's `Date` response header, read from git's curl trace of one
 *    `ls-remote` (what the remote's clock said while it answered our request);
 *  - other hosts' claim commits: a claim is committed at its host's "now" and renewed
 *    every lease/3, so one committed more than 30 s in our future means that host's
 *    clock is ahead. A clock that is behind can't be told from a late renewal, so only
 *    "ahead" is judged from claims.
 * Read-only: one `ls-remote` and the claims' commit objects, no ref is written.
 */
import {git, gitEnv, firstLine} from '../git/run.js'
import {createClaims, hostName} from '../remote/claim-refs.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {DoctorCheck} from './doctor-check.js'

/** SPEC 19.1: doctor warns past this difference */
export const CLOCK_WARN_S = 30

const CLOCK_FIX = 'synchronise the clocks (NTP: e.g. `timedatectl set-ntp true`); leases tolerate 60 s of skew'

/** the last `Date` response header in a GIT_TRACE_CURL trace, or null */
export function traceDate(trace: string): Date | null {
  let found: Date | null = null
  for (const m of trace.matchAll(/Recv header: date: *([^\r\n]+)/gi)) {
    const t = Date.parse(m[1]!.trim())
    if (!Number.isNaN(t)) found = new Date(t)
  }
  return found
}

function span(s: number): string {
  return s >= 90 ? `${Math.round(s / 60)}m` : `${Math.round(s)}s`
}

export async function remoteChecks(root: string, remote: string, env: NodeJS.ProcessEnv, now: () => Date = () => new Date()): Promise<DoctorCheck[]> {
  const name = remote.trim()
  const genv = gitEnv(env)
  const url = await git(['remote', 'get-url', name], {cwd: root, env: genv})
  if (url.code !== 0) throw new HelixError(`--remote ${sanitize(name)}: no such git remote here (see 'git remote -v')`, EXIT.ERROR)
  const http = /^https?:\/\//i.test(url.stdout.trim())
  const t0 = now().getTime()
  const ls = await git(['ls-remote', '--heads', name], {cwd: root, env: http ? {...genv, GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1'} : genv})
  const t1 = now().getTime()
  if (ls.code !== 0) {
    return [{level: 'fail', what: 'remote', detail: `${sanitize(name)} does not answer: ${sanitize(firstLine(ls))}`, fix: `check the network and 'git ls-remote ${sanitize(name)}'; a --remote run takes no new claim while it is away`}]
  }
  const checks: DoctorCheck[] = [{level: 'ok', what: 'remote', detail: `${sanitize(name)} answers`}]
  const problems: string[] = []
  const seen: string[] = []
  const served = http ? traceDate(ls.stderr) : null
  if (served) {
    // the header has whole seconds and was stamped somewhere inside our request
    const skew = (served.getTime() - (t0 + t1) / 2) / 1000
    seen.push(`the remote's HTTP Date`)
    if (Math.abs(skew) > CLOCK_WARN_S + 1 + (t1 - t0) / 2000) problems.push(`this host's clock is ${span(Math.abs(skew))} ${skew > 0 ? 'behind' : 'ahead of'} the remote's (its HTTP Date)`)
  }
  const me = hostName(env)
  const claims = await createClaims({cwd: root, remote: name, env, host: me, run: 'doctor', pid: process.pid, leaseSec: 300, now}).list()
  const ahead = new Map<string, {s: number; bead: string}>()
  const hosts = new Set<string>()
  const at = now().getTime()
  for (const c of claims ?? []) {
    if (!c.message || c.message.host === me || c.bead.includes('/')) continue
    hosts.add(c.message.host)
    const s = (c.committedAt.getTime() - at) / 1000
    const prev = ahead.get(c.message.host)
    if (s > CLOCK_WARN_S && (!prev || s > prev.s)) ahead.set(c.message.host, {s, bead: c.bead})
  }
  // a ref under a claim's name (`refs/helix/claims/<id>/…`) is no claim; it makes <id> unclaimable
  for (const c of claims ?? []) {
    if (!c.bead.includes('/')) continue
    const blocked = c.bead.slice(0, c.bead.indexOf('/'))
    checks.push({
      level: 'warn',
      what: 'stray claim ref',
      detail: `${sanitize(c.ref)} on ${sanitize(name)} is not a claim; it blocks the claim ref of ${sanitize(blocked)}, so no host can claim ${sanitize(blocked)}`,
      fix: `git push ${sanitize(name)} :${sanitize(c.ref)}`,
    })
  }
  if (hosts.size > 0) seen.push(`${hosts.size} other host(s)' claims`)
  for (const [host, a] of ahead) problems.push(`${sanitize(host)}'s clock is at least ${span(a.s)} ahead of this host's (its claim on ${sanitize(a.bead)} is committed in the future)`)
  if (problems.length > 0) checks.push({level: 'warn', what: 'clock', detail: problems.join('; '), fix: CLOCK_FIX})
  else if (seen.length > 0) checks.push({level: 'ok', what: 'clock', detail: `within ${CLOCK_WARN_S}s of ${seen.join(' and ')}`})
  else checks.push({level: 'ok', what: 'clock', detail: 'nothing to compare with yet (not an http(s) remote, and no other host holds a claim)'})
  return checks
}
