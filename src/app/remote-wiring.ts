/**
 * Wiring of `helix run --remote <name>` (SPEC 19): replaces the run's tracker and
 * landing ports by the remote ones (remote/fleet.ts, landing/remote.ts), makes
 * every attempt run in a worktree, stops an attempt whose lease is lost, and
 * waits for beads other hosts hold instead of draining past them.
 */
import path from 'node:path'
import {gitEnv} from '../git/run.js'
import {openRepo, saysUnreachable} from '../git/repo.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {createFleet, type Fleet} from '../remote/fleet.js'
import {hostName} from '../remote/claim-refs.js'
import {createRemoteLanding} from '../landing/remote.js'
import {shareRunRecords} from './run-records-share.js'
import type {RealLoop} from './wiring.js'
import type {PrFlags} from './pr-wiring.js'
import type {LandCheckSpec} from '../landing/land-check.js'
import {factsIn, type CheckoutFacts} from '../git/where.js'
import {createRemoteLandLock} from '../remote/land-lock.js'
import {skewMs} from '../remote/claim-refs.js'

export interface RemoteFlags {
  remote: string
  leaseSec: number
  maxOfflineSec: number
}

function wholeSeconds(raw: string | undefined, name: string, def: number, min: number): number {
  if (raw === undefined) return def
  const t = raw.trim()
  const n = Number(t)
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(n) || n < min || n > 30 * 86400) throw new HelixError(`invalid ${name} '${sanitize(raw).slice(0, 40)}': expected seconds, a whole number ≥ ${min}`, EXIT.ERROR)
  return n
}

/** `--remote`, `--lease`, `--max-offline` validated before anything is written (one line naming the flag). */
export function parseRemoteFlags(f: {remote?: string; lease?: string; 'max-offline'?: string}): RemoteFlags | null {
  if (f.remote === undefined) {
    if (f.lease !== undefined || f['max-offline'] !== undefined) throw new HelixError(`--lease and --max-offline need --remote <name>`, EXIT.ERROR)
    return null
  }
  const name = f.remote.trim()
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) throw new HelixError(`invalid --remote '${sanitize(f.remote).slice(0, 40)}': expected the name of a git remote (like origin)`, EXIT.ERROR)
  return {remote: name, leaseSec: wholeSeconds(f.lease, '--lease', 300, 3), maxOfflineSec: wholeSeconds(f['max-offline'], '--max-offline', 3600, 1)}
}


function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Attaches the remote ports; throws HelixError(1) when the remote is unknown or never answers at start.
 * `dryRun`: only the queue (one fetch, then the tracker at the fetched tip with live claims
 * shown as claimed), so `run --dry-run --remote` previews what this host would pick; it
 * registers nothing, claims nothing and starts no renewals.
 */
export async function attachRemote(real: RealLoop, flags: RemoteFlags, env: NodeJS.ProcessEnv, onMaxOffline: () => void, dryRun = false, pr: PrFlags | null = null, landCheck?: Omit<LandCheckSpec, 'env'>, known0?: CheckoutFacts | null): Promise<Fleet> {
  const {createGitLanding} = await import('../landing/local.js')
  const {deps, paths} = real
  const root = paths.root
  const run = openRepo(root, gitEnv(env)).run
  // the start-up check's answers, when it asked in this root: three rev-parses spared
  const known = factsIn(known0, root)
  const top = known ? known.top : (await run(['rev-parse', '--show-toplevel'])).stdout.trim()
  if (!top) throw new HelixError(`helix run: --remote needs a git checkout (${sanitize(root)} is not in a git repository)`, EXIT.ERROR)
  if ((await run(['remote', 'get-url', flags.remote])).code !== 0) throw new HelixError(`helix run: --remote ${sanitize(flags.remote)}: no such git remote here (see 'git remote -v')`, EXIT.ERROR)
  // SPEC 20.5: the forge's CLI missing or logged out is one line, exit 4, before anything is claimed
  const prw = pr && !dryRun ? await import('./pr-wiring.js') : null
  const forge = prw && pr ? await prw.forgeAtStart(pr, root, env) : null
  const prefix = known ? known.prefix : (await run(['rev-parse', '--show-prefix'])).stdout.trim()
  const common = known ? known.commonDir : path.resolve(root, (await run(['rev-parse', '--git-common-dir'])).stdout.trim())
  const log = (line: string) => deps.out.normal(line)
  const local = createGitLanding({root, trackerDir: paths.dir, env, now: () => new Date(), log, known})
  const base = await local.base()
  const host = hostName(env)
  const scratch = path.join(common, 'helix-remote')
  const trackerRel = `${prefix}.ddx/beads.jsonl`
  const fleet = createFleet({
    root,
    remote: flags.remote,
    base,
    trackerRel,
    scratch,
    env,
    host,
    runId: `${host}:${process.pid}:${Date.now().toString(36)}`,
    pid: process.pid,
    leaseSec: flags.leaseSec,
    maxOfflineSec: flags.maxOfflineSec,
    now: () => new Date(),
    log: (line) => deps.out.both(line),
    pidAlive,
    onMaxOffline,
    ...(prw ? {wrapBase: prw.prWrapBase({root, remote: flags.remote, env, scratch})} : {}),
  })
  if (!(await fleet.rb.fetch())) {
    // SPEC 20.1: an unreachable remote is said so, quoting git; a remote that answered without the base is another fix
    const said = fleet.rb.lastFailure()
    const quote = said ? ` (git: ${sanitize(said).slice(0, 200)})` : ''
    if (saysUnreachable(said)) throw new HelixError(`helix run: the remote ${sanitize(flags.remote)} is unreachable${quote}; nothing was claimed: run again when it answers`, EXIT.ERROR)
    throw new HelixError(`helix run: --remote ${sanitize(flags.remote)}: cannot fetch ${sanitize(base)} from it${quote}; is ${sanitize(base)} the remote's base branch?`, EXIT.ERROR)
  }
  // SPEC 19.3: --remote runs register the tracker merge driver, and say so once (after the remote answered: a refused start changes nothing here)
  const {registerMergeDriver} = await import('../remote/merge-driver.js')
  const reg = dryRun ? {added: []} : await registerMergeDriver(root, env)
  if (reg.added.length > 0) deps.out.normal(`helix: registered the tracker merge driver (${reg.added.join(', ')})`)
  deps.tracker = fleet.tracker
  if (dryRun) {
    deps.out.normal(`helix: --remote ${sanitize(flags.remote)}: previewing the queue ${sanitize(flags.remote)}/${sanitize(base)}:${sanitize(trackerRel)} as host ${sanitize(host)}`)
    return fleet
  }
  // SPEC 20.3: the land check on every candidate, and the cross-host lock of its last round
  const check = landCheck ? {landCheck: {...landCheck, env}, landLock: createRemoteLandLock({repo: fleet.rb.repo, remote: flags.remote, host, run: fleet.runId, pid: process.pid, leaseSec: flags.leaseSec, skewMs: skewMs(env), now: () => new Date()})} : {}
  deps.landing = createRemoteLanding({root, top, prefix, remote: flags.remote, base, trackerRel, scratch, host, pid: process.pid, fleet, local, now: () => new Date(), log, notice: (line) => deps.out.both(line), ...check})
  deps.alwaysWorktree = true
  deps.remoteWaiting = () => (fleet.offline() ? [{until: new Date(Date.now() + 5000).toISOString(), what: `the remote ${sanitize(flags.remote)} to answer`}] : fleet.waiting())
  // SPEC 19.4: an attempt whose lease is lost is stopped (its group killed by the runner's abort)
  const dispatch = deps.agents.dispatch
  deps.agents.dispatch = async (a) => {
    if (!a.beadId || !fleet.held.has(a.beadId)) return dispatch(a)
    const ac = new AbortController()
    const outer = a.signal
    const relay = () => ac.abort(outer?.reason)
    if (outer?.aborted) ac.abort(outer.reason)
    else outer?.addEventListener('abort', relay, {once: true})
    const off = fleet.onLost(a.beadId, () => ac.abort('lease lost'))
    try {
      return await dispatch({...a, signal: ac.signal})
    } finally {
      off()
      outer?.removeEventListener('abort', relay)
    }
  }
  // SPEC 19.5: the run's history record carries the host
  const history = deps.history
  if (history)
    deps.history = {
      async append(rec) {
        await history.append({...rec, host, remote: flags.remote})
        // SPEC 22.2: the fleet's report reads every host's records from the remote
        await shareRunRecords({root, remote: flags.remote, env, host, scratch, logDir: paths.logDir, log})
      },
    }
  fleet.start()
  if (prw && pr && forge) {
    const runId = fleet.runId
    const prRun = await prw.attachPr({deps, flags: pr, forge, fleet, inner: deps.landing, root, remote: flags.remote, base, trackerRel, scratch, host, runId, env, maxOfflineSec: flags.maxOfflineSec, ...(landCheck ? {landCheck: {...landCheck, env}} : {})})
    const close = fleet.close
    fleet.close = async () => {
      await prRun.close()
      await close()
    }
  }
  deps.out.normal(`helix: --remote ${sanitize(flags.remote)}: queue ${sanitize(flags.remote)}/${sanitize(base)}:${sanitize(trackerRel)}, host ${sanitize(host)}, lease ${flags.leaseSec}s`)
  return fleet
}
