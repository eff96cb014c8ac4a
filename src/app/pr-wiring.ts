/**
 * Wiring of `helix run --remote <name> --land pr` (SPEC 20.5), called from
 * `attachRemote`: the forge (gh, or `--pr-command`) checked at start, the tracker
 * port's writes sent to `refs/helix/state`, the landing port that opens pull
 * requests, the sweep over every pull-request claim (at start, then every
 * `--pr-poll` s), and `--pr-wait`: with nothing else selectable the run keeps
 * looking at its open pull requests before it stops.
 */
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {hhmmss} from '../util/time.js'
import {commandForge} from '../forge/command.js'
import {ghForge} from '../forge/gh.js'
import type {Forge, MergeMethod} from '../forge/types.js'
import type {RemoteBase} from '../remote/base.js'
import type {LoopDeps, LoopLanding} from '../loop/ports.js'
import type {Fleet} from '../remote/fleet.js'
import {createPrLanding} from '../landing/pr.js'
import {createAutoMerge} from '../landing/pr-shared.js'
import {stateBase, type StateBase} from '../landing/pr-state-base.js'
import {createTrackerPr} from '../landing/pr-tracker.js'
import {createSweep, type Sweep} from '../landing/pr-sweep.js'
import type {LandCheckSpec} from '../landing/land-check.js'
import {createPrResolver, type PrResolver} from '../landing/pr-resolve.js'
import type {SessionLogLike} from '../agents/types.js'
import {writePrCache, type SeenPr} from '../forge/pr-cache.js'

export interface PrFlags {
  autoMerge: MergeMethod | null
  waitSec: number
  pollSec: number
  /** the adapter command (split on spaces, no shell); null: gh */
  command: string | null
  /** SPEC 20.4 rounds per pull request (--resolve-attempts; 0: a conflict or red check stays for a person at once) */
  resolveAttempts?: number
}

/** the forge, installed and logged in; else HelixError exit 4 before anything is claimed */
export async function forgeAtStart(flags: PrFlags, cwd: string, env: NodeJS.ProcessEnv): Promise<Forge> {
  const forge = flags.command ? commandForge(flags.command, {cwd, env}) : ghForge({cwd, env})
  const a = await forge.auth()
  if (!a.ok) throw new HelixError(`helix run --land pr: ${a.message}`, EXIT.AGENT_UNAVAILABLE)
  return forge
}

/** `FleetOptions.wrapBase` for --land pr: the tracker port reads and writes through refs/helix/state */
export const prWrapBase = (o: {root: string; remote: string; env: NodeJS.ProcessEnv; scratch: string}) => (plain: RemoteBase) => stateBase(plain, o)

export interface PrAttachOptions {
  deps: LoopDeps
  flags: PrFlags
  forge: Forge
  fleet: Fleet
  inner: LoopLanding
  root: string
  remote: string
  base: string
  trackerRel: string
  scratch: string
  host: string
  runId: string
  env: NodeJS.ProcessEnv
  /** --max-offline: how long a forge that cannot be reached is waited for (SPEC 19.4, read for the forge) */
  maxOfflineSec: number
  /** SPEC 20.4: the sweep's resolve call; default: the run's implementation agent (createPrResolver) */
  resolve?: PrResolver
  /** SPEC 20.3: `--land-check`, run on the rebased branch before a pull request opens */
  landCheck?: LandCheckSpec
}

export interface PrRun {
  sweep: Sweep
  close(): Promise<void>
}

export async function attachPr(o: PrAttachOptions): Promise<PrRun> {
  const {deps, flags, fleet} = o
  const {createRemoteBase} = await import('../remote/base.js')
  const plain = createRemoteBase({root: o.root, remote: o.remote, base: o.base, trackerRel: o.trackerRel, env: o.env, scratch: o.scratch})
  const now = () => new Date()
  const log = (line: string) => deps.out.both(line)
  let waitFrom = Date.now()
  // the sweep's resolve calls write to the session log once the loop has opened it
  let sessionLog: SessionLogLike | null = null
  const attach = deps.out.attach.bind(deps.out)
  deps.out.attach = (l) => {
    sessionLog = l
    attach(l)
  }
  const rounds = flags.resolveAttempts ?? 2
  const resolve = rounds > 0 ? (o.resolve ?? createPrResolver({agents: deps.agents, tracker: fleet.tracker, log: () => sessionLog})) : undefined
  const sweep = createSweep({
    root: o.root,
    remote: o.remote,
    base: o.base,
    trackerRel: o.trackerRel,
    scratch: o.scratch,
    fleet,
    plain,
    forge: o.forge,
    now,
    log,
    note: (bead, text) => fleet.tracker.appendNote(bead, text),
    resolveAttempts: rounds,
    host: o.host,
    ...(resolve ? {resolve} : {}),
  })
  // --pr-auto-merge: asked for when a pull request opens, asked again at each look while the forge is away
  const autoMerge = flags.autoMerge ? createAutoMerge({forge: o.forge, method: flags.autoMerge, log}) : null
  deps.landing = createPrLanding({
    root: o.root,
    remote: o.remote,
    base: o.base,
    trackerRel: o.trackerRel,
    scratch: o.scratch,
    host: o.host,
    runId: o.runId,
    pid: process.pid,
    fleet,
    plain,
    inner: o.inner,
    forge: o.forge,
    autoMerge,
    now,
    log,
    maxOfflineSec: o.maxOfflineSec,
    onOpened: (bead, url) => {
      waitFrom = Date.now()
      sweep.opened({bead, url, host: o.host, openedAt: new Date().toISOString(), view: null})
    },
    ...(o.landCheck ? {landCheck: o.landCheck} : {}),
  })
  // the tracker-only pull request (helix/tracker): beads helix filed or closed reach the base through it
  const sb = fleet.rb as Partial<StateBase>
  const trackerPr = sb.overlay ? createTrackerPr({remote: o.remote, base: o.base, host: o.host, plain, overlay: sb.overlay, forge: o.forge, autoMerge: flags.autoMerge, log}) : null
  // what this look saw, for status, report and the dashboard (one forge call a minute per pull request)
  const remember = async (): Promise<void> => {
    const titles = await fleet.tracker.read().catch(() => null)
    const seenAt = new Date().toISOString()
    const prs: SeenPr[] = sweep.open().map((p) => ({
      bead: p.bead,
      url: p.url,
      title: String(titles?.byId.get(p.bead)?.title ?? ''),
      host: p.host || null,
      opened_at: p.openedAt || null,
      state: p.view?.state ?? 'unknown',
      checks: p.view?.checks ?? 'unknown',
      mergeable: p.view?.mergeable ?? 'unknown',
      seen_at: p.view ? seenAt : null,
    }))
    await writePrCache(o.root, prs)
  }
  let running: Promise<void> | null = null
  const look = (): Promise<void> => {
    running ??= (autoMerge ? autoMerge.retry() : Promise.resolve())
      .then(() => sweep.run())
      .then(async (changed) => {
        if (changed > 0) waitFrom = Date.now()
        await remember()
        if (trackerPr && (await trackerPr.tick()) === 'opened') waitFrom = Date.now()
      })
      .catch((error: unknown) => log(`helix: looking at the pull requests failed: ${sanitize(String(error))}`))
      .finally(() => (running = null))
    return running
  }
  await look()
  const timer = setInterval(() => void look(), flags.pollSec * 1000)
  timer.unref?.()
  // --pr-wait: open pull requests are waited for (as beads other hosts hold are), counted from the last change
  const waiting = deps.remoteWaiting
  deps.remoteWaiting = () => {
    const rest = waiting ? [...waiting()] : []
    const open = sweep.open()
    if (open.length > 0 && Date.now() - waitFrom < flags.waitSec * 1000) {
      const ids = open.slice(0, 5).map((p) => sanitize(p.bead)).join(', ') + (open.length > 5 ? ` and ${open.length - 5} more` : '')
      // the end is counted from the last change (a merge, a close, a pull request opened): said again when it moves
      const what = `${open.length} pull request${open.length === 1 ? '' : 's'} to merge (${ids}; --pr-wait until ${hhmmss(new Date(waitFrom + flags.waitSec * 1000))})`
      rest.push({until: new Date(Date.now() + Math.min(flags.pollSec, 5) * 1000).toISOString(), what})
    }
    return rest
  }
  deps.awaitingMerge = () => sweep.open().length
  // a pull request left for a person is named in the blocker report too (once, with its reason)
  const report = deps.blockerReport
  let reported = false
  deps.blockerReport = (a) => {
    reported = true
    const extra = [...sweep.stuck()].filter(([id]) => !a.entries.some((e) => e.id === id)).map(([id, why]) => ({id, title: '', reason: `pull request needs a person: ${why}`, attempts: 0}))
    return report({...a, entries: [...a.entries, ...extra]})
  }
  // the loop writes its report only when it skipped a bead; the run's counts come from its history record
  let counts = {attempted: 0, completed: 0}
  const history = deps.history
  if (history) deps.history = {append: (rec) => ((counts = {attempted: rec.attempted, completed: rec.completed}), history.append(rec))}
  deps.out.normal(`helix: --land pr: pull requests into ${sanitize(o.base)} through ${sanitize(o.forge.name)}${flags.autoMerge ? `, auto-merge by ${flags.autoMerge}` : ''}; ${sweep.open().length} awaiting merge`)
  return {
    sweep,
    async close() {
      clearInterval(timer)
      // SPEC 20.5: a pull request left for a person is in the blocker report (its terminal line was said once already)
      if (reported || sweep.stuck().size === 0) return
      try {
        const file = await deps.blockerReport({now: now(), ...counts, logPath: sessionLog?.path || null, entries: []})
        deps.out.normal(`helix: blocker report: ${file}`)
      } catch (error) {
        sessionLog?.event('blocker report failed', {error: String(error)}, 'error')
      }
    },
  }
}
