/**
 * `helix recover <id>` (SPEC 13.3): release ONE named claim whose claimer is not live by
 * pid evidence, even when the age rule of 2.4 would keep it (a `claimed-at` more than 5
 * minutes in the future is no evidence of age, so such a claim never grows old).
 *
 * Not live by pid evidence: the claim names this host (or no host, as older tools wrote
 * it) and a pid; that pid is not running, or runs with another start token than the
 * recorded `claimed-start`; no process on this host carries a dispatch id of the claim
 * (`HELIX_DISPATCH_ID` = `<claim-token>.<n>`); and no running helix process names the
 * bead (the ps-list clause of 2.4). Anything else is refused in one line, nothing changed.
 */
import type {ProjectPaths} from '../util/root.js'
import type {Bead, ProcessProbe} from '../tracker/types.js'
import {mutateTracker, readTracker} from '../tracker/store.js'
import {statusOf} from '../tracker/queries.js'
import {claimPid, FUTURE_SKEW_MS} from '../tracker/liveness.js'
import {CLAIM_KEYS, isoNow} from '../tracker/ops.js'
import {processesOfDispatch} from '../proc/tagged.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {killDeadRunProcesses} from './orphans.js'

export interface ReleaseOptions {
  /** owner name whose claims may be released (HELIX_OWNER, default `helix`) */
  owner: string
  probe: ProcessProbe
  now?: Date
  dryRun?: boolean
  /** receives each line (already prefixed with `helix: `, not yet sanitized) */
  say: (line: string) => void
  /** end the leftover processes of dead runs first (SPEC 14.5); default true */
  killDeadRuns?: boolean
}

export type PidEvidence = {live: true; why: string} | {live: false; why: string} | {live: 'unknown'; why: string}

function tokenString(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined
}

/** What the pid evidence says about the claimer of `b` (no age rule). */
export async function pidEvidence(b: Bead, probe: ProcessProbe): Promise<PidEvidence> {
  const machine = b['claimed-machine']
  if (typeof machine === 'string' && machine !== '' && machine !== probe.hostname()) {
    return {live: 'unknown', why: `it was claimed on host ${machine}, whose processes cannot be checked from here`}
  }
  const pid = claimPid(b)
  if (pid === null) return {live: 'unknown', why: 'the claim records no claimed-pid, so there is no pid evidence'}
  let dead: string
  if (probe.isRunning(pid)) {
    const recorded = tokenString(b['claimed-start'])
    const current = probe.startToken(pid)
    if (recorded === undefined || current === undefined || recorded === current) return {live: true, why: `claimed by PID ${pid} which is still alive`}
    dead = `pid=${pid} now belongs to another process`
  } else dead = `pid=${pid} not running`
  const token = tokenString(b['claim-token'])
  if (token !== undefined) {
    const alive = probe.dispatchAlive ? probe.dispatchAlive(token) : processesOfDispatch(token, {prefix: true}).length > 0
    if (alive) return {live: true, why: `a process of its dispatch (HELIX_DISPATCH_ID ${token}.*) is still running`}
  }
  if (await probe.helixProcessNamesBead(b.id)) return {live: true, why: 'a running helix process on this host is working on it'}
  return {live: false, why: dead}
}

function claimKey(b: Bead): string {
  return JSON.stringify([b.status, b.owner, ...CLAIM_KEYS.map((k) => b[k])])
}

/** `claimed-at <v> is in the future` when it is more than 5 minutes ahead, else null. */
function futureNote(b: Bead, now: Date): string | null {
  const v = b['claimed-at']
  if (typeof v !== 'string') return null
  const t = Date.parse(v)
  return !Number.isNaN(t) && t - now.getTime() > FUTURE_SKEW_MS ? `claimed-at ${v} is in the future` : null
}

/** Refusal or "nothing to do" reasons, checked on a fresh read and again under the lock. */
function judge(b: Bead | undefined, id: string, owner: string): {kind: 'refuse'; line: string} | {kind: 'noop'; line: string} | {kind: 'claimed'; b: Bead} {
  const shown = sanitize(id)
  if (!b) return {kind: 'refuse', line: `unknown bead '${shown}'`}
  const status = statusOf(b)
  if (status !== 'in_progress') return {kind: 'noop', line: `helix: ${shown} is not claimed (status ${sanitize(status)}); nothing to recover`}
  if (b.owner !== owner) {
    const who = typeof b.owner === 'string' && b.owner !== '' ? `by ${sanitize(b.owner)}` : 'by no owner'
    return {kind: 'refuse', line: `not releasing ${shown}: it is claimed ${who}, not ${sanitize(owner)} (HELIX_OWNER); release it with 'helix tracker update ${shown} --unclaim'`}
  }
  return {kind: 'claimed', b}
}

/**
 * Release the claim on `id` when its claimer is not live by pid evidence. Throws a
 * HelixError (exit 1, nothing changed) for an unknown id, another owner's claim, or a
 * claimer that is live or cannot be checked. Returns true when released (or, with
 * `dryRun`, when it would be), false when the bead was not claimed.
 */
export async function releaseClaim(paths: ProjectPaths, id: string, opts: ReleaseOptions): Promise<boolean> {
  const now = opts.now ?? new Date()
  const owner = opts.owner.trim() || 'helix'
  const first = judge((await readTracker(paths.file)).byId.get(id), id, owner)
  if (first.kind === 'refuse') throw new HelixError(first.line, EXIT.ERROR)
  if (first.kind === 'noop') {
    opts.say(first.line)
    return false
  }
  // a dead run's leftover agent still carries the claim's dispatch id: end it first (14.5)
  if (opts.killDeadRuns !== false) await killDeadRunProcesses({project: paths.root, say: opts.say, ...(opts.dryRun ? {dryRun: true} : {})})
  const decide = async (b: Bead): Promise<string> => {
    const ev = await pidEvidence(b, opts.probe)
    if (ev.live === true) throw new HelixError(`not releasing ${sanitize(id)}: ${ev.why}`, EXIT.ERROR)
    if (ev.live === 'unknown') throw new HelixError(`not releasing ${sanitize(id)}: ${ev.why}; release it with 'helix tracker update ${sanitize(id)} --unclaim' once you know its claimer is gone`, EXIT.ERROR)
    return [futureNote(b, now), ev.why].filter(Boolean).join('; ')
  }
  const why = await decide(first.b)
  if (opts.dryRun) {
    opts.say(`helix: would release ${id} (${why})`)
    return true
  }
  const key = claimKey(first.b)
  const done = await mutateTracker(paths, async (locked) => {
    const j = judge(locked.byId.get(id), id, owner)
    if (j.kind === 'refuse') throw new HelixError(j.line, EXIT.ERROR)
    if (j.kind === 'noop') return {beads: null, result: {released: false, line: j.line}}
    // the claim changed since we looked (renewed, re-claimed): decide again on what is there now
    const reason = claimKey(j.b) === key ? why : await decide(j.b)
    j.b.status = 'open'
    delete j.b.owner
    for (const k of CLAIM_KEYS) delete j.b[k]
    j.b.updated_at = isoNow(now)
    return {beads: locked.beads, result: {released: true, line: `helix: released ${id} (${reason})`}}
  })
  opts.say(done.line)
  return done.released
}
