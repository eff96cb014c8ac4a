/**
 * The run loop's entry (SPEC 4, 5, 6): the agent check and the mutex, then one
 * Run (run.ts) driven by the scheduler (scheduler.ts); `--dry-run` here.
 * No I/O that does not go through a port (ports.ts), so each branch is a unit
 * test with fakes.
 */
import type {ActionName} from '../agents/types.js'
import {emptyRunState} from '../state/run-state.js'
import type {RunState} from '../state/types.js'
import {HelixError, helixMessage, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {matchSelector} from './build-once.js'
import type {LoopDeps, LoopOptions, LoopResult} from './ports.js'
import {selectTarget, selectableBeads} from './selection.js'
import {Run} from './run.js'
import {planLine, planReconcile} from '../recovery/reconcile-plan.js'

export {DRIFT_REASON} from './attempt-end.js'
export {hhmmss} from '../util/time.js'

/** SPEC 18.2: what reconciliation would do, one line each; reads only */
async function reconcilePlanLines(deps: LoopDeps): Promise<string[]> {
  const landing = deps.landing
  if (!landing?.leftovers) return []
  try {
    const items = await landing.leftovers()
    const snap = await deps.tracker.read()
    const base = await landing.base()
    const owed = landing.pending ? await landing.pending.list() : []
    return [
      ...owed.map((p) => `helix: would reopen ${sanitize(p.bead)} (owed since ${sanitize(p.at)})`),
      ...planReconcile(snap, items).map((a) => planLine(a, base)),
    ]
  } catch {
    // outside git or without a base branch: nothing a run could have left
    return []
  }
}

export async function runLoop(deps: LoopDeps, opts: LoopOptions): Promise<LoopResult> {
  if (opts.dryRun) return dryRun(deps, opts)
  // SPEC 5.1 checks the agents right after taking the mutex; checking them first
  // is read-only and means a missing agent (bad input) changes nothing on disk:
  // no pid file, no .ddx/ created in a directory that had none.
  try {
    deps.agents.check()
  } catch (error) {
    if (!(error instanceof HelixError)) throw error
    deps.out.both(helixMessage(sanitize(error.message)))
    return {exitCode: error.exitCode, stopReason: null}
  }
  if ((opts.workers ?? 1) > 1) {
    // SPEC 15: workers need a base branch; a detached HEAD or no git is bad input
    try {
      if (!deps.landing) throw new HelixError('--workers > 1 needs git worktrees, which this build cannot make', EXIT.ERROR)
      await deps.landing.base()
    } catch (error) {
      if (!(error instanceof HelixError)) throw error
      deps.out.both(helixMessage(error.message))
      return {exitCode: error.exitCode, stopReason: null}
    }
  }
  const acquired = deps.mutex.acquire()
  if (!acquired.ok) {
    const bump = (prev: RunState) => ({...prev, parallel_run_denied_count: (prev.parallel_run_denied_count ?? 0) + 1, updated_at: deps.clock.now().toISOString()})
    if (deps.state.update) await deps.state.update(bump) // under the run-state lock (SPEC 13.1)
    else await deps.state.save(bump((await deps.state.load()) ?? emptyRunState(deps.clock.now())))
    const name = opts.commandName ?? 'helix run'
    deps.out.both(`${name}: already running (pid=${acquired.holder.pid}, started=${sanitize(acquired.holder.started)})`)
    return {exitCode: EXIT.BUSY, stopReason: null}
  }
  try {
    if ((opts.workers ?? 1) > 1) await deps.landing?.ensureExcludes()
    return await new Run(deps, opts).run()
  } finally {
    deps.mutex.release()
  }
}

/**
 * SPEC 4 `--dry-run`: print the first dispatch's command line and prompt; change
 * nothing. SPEC 16.6: works with no agent installed (the describer marks it).
 */
async function dryRun(deps: LoopDeps, opts: LoopOptions): Promise<LoopResult> {
  try {
    deps.agents.check()
  } catch (error) {
    // a missing agent is what --dry-run is for: the command line says `(not found on PATH)`
    if (!(error instanceof HelixError)) throw error
  }
  const snap = await deps.tracker.read()
  const stale = await deps.tracker.staleClaims(snap)
  let sel = selectTarget(snap, {now: deps.clock.now(), staleClaims: stale})
  if (opts.once?.selector) {
    const needle = opts.once.selector
    const {selectable} = selectableBeads(snap, {now: deps.clock.now(), staleClaims: stale})
    const match = matchSelector(selectable, needle)
    if (!match) {
      deps.out.both(`helix: no ready issue matches '${sanitize(needle)}'`)
      return {exitCode: EXIT.ERROR, stopReason: null}
    }
    sel = {...sel, target: match, batch: []}
  }
  let action: ActionName
  let prompt: string
  if (sel.target) {
    action = 'implementation'
    const contextMd = await deps.context(snap, sel.epicFocus ?? null, false)
    const batchIds = opts.once ? [] : sel.batch.map((b) => b.id)
    prompt = await deps.agents.prompt('implementation', {beadId: sel.target.id, ...(batchIds.length ? {batchIds} : {}), contextMd})
  } else {
    action = 'check'
    prompt = await deps.agents.prompt('check', {scope: 'repo'})
  }
  for (const line of await reconcilePlanLines(deps)) deps.out.stdout(line + '\n')
  deps.out.stdout(deps.agents.describe(deps.agents.impl, action, prompt) + '\n')
  deps.out.stdout('--- prompt ---\n' + prompt + (prompt.endsWith('\n') ? '' : '\n'))
  return {exitCode: EXIT.OK, stopReason: null}
}
