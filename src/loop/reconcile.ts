/**
 * Reconciling at start (SPEC 18.2): after orphan recovery and before the first
 * selection, every attempt a dead run left behind is finished, preserved or
 * removed (plan in recovery/reconcile-plan.ts), and every reopen a run owed
 * (SPEC 18.1a) is written. A finished attempt runs the rest of its tail by the
 * ordinary rules (gate, review when due, drift check against the fingerprint
 * taken at its claim, landing) and counts as an attempted cycle of this run.
 */
import {PLAIN_VERDICT, type DispatchResult} from '../agents/types.js'
import {planReconcile, type ReconcileAction} from '../recovery/reconcile-plan.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {errorMessage} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {record, runFrom, type AttemptCtx} from './attempt.js'
import {fingerprint, type Fingerprint} from './fingerprint.js'
import {reopenNotLanded} from './not-landed.js'
import {statusOf} from './selection.js'
import {Stop, type Step} from './stop.js'
import type {Run} from './run.js'

const NO_DISPATCH: DispatchResult = {end: 'exited', rc: 0, text: '', tokens: 0, durationMs: 0, logRange: null, argv: [], verdict: PLAIN_VERDICT}

/** reopens owed by an earlier run (the tracker was locked or the disk full then) */
async function payOwedReopens(r: Run, snap: TrackerSnapshot): Promise<void> {
  const pending = r.d.landing?.pending
  if (!pending) return
  for (const p of await pending.list()) {
    const b = snap.byId.get(p.bead)
    if (b && statusOf(b) === 'closed') {
      try {
        await r.d.tracker.reopen(p.bead, p.note)
        r.d.out.normal(`helix: reopened ${sanitize(p.bead)} (owed since ${sanitize(p.at)}): ${sanitize(p.note)}`)
      } catch (error) {
        r.d.out.both(`helix: still cannot reopen ${sanitize(p.bead)}: ${sanitize(errorMessage(error))}`)
        continue
      }
    }
    await pending.remove(p.bead)
  }
}

function validFingerprint(v: unknown): v is Fingerprint {
  if (!v || typeof v !== 'object') return false
  const keys: Array<keyof Fingerprint> = ['spec-id', 'parent', 'superseded-by', 'replaces', 'deps', 'execution-eligible']
  return keys.every((k) => typeof (v as Record<string, unknown>)[k] === 'string')
}

/** the rest of a closed bead's attempt: gate, review when due, drift check, landing */
async function finish(r: Run, act: ReconcileAction, bead: Bead, snap: TrackerSnapshot): Promise<Step> {
  const landing = r.d.landing
  const l = act.l
  const ws = landing?.adopt ? await landing.adopt(l, 1) : null
  if (!ws) {
    const ref = landing?.preserveLeftover ? await landing.preserveLeftover(l) : null
    await reopenNotLanded(r, l.bead, 'its worktree was left on a detached HEAD (or could not be re-added) by a run that died', ref)
    return 'continue'
  }
  const startedAt = r.now()
  // a resumed attempt counts as an attempted cycle of this run (SPEC 18.2)
  const n = r.ledger.beginAttempt(1, l.bead, startedAt)
  r.ledger.dispatched()
  r.d.out.both(`helix: [${r.t()}] resuming ${sanitize(l.bead)} attempt ${l.attempt} after a crash: ${act.commits} commit(s) to land`)
  r.ledger.setWorker({slot: 1, bead: l.bead, title: sanitize(bead.title ?? ''), attempt: l.attempt, started_at: startedAt.toISOString(), worktree: ws.dir, branch: ws.branch, pid: null, last_output: null})
  await r.ledger.save('landing')
  const fp = validFingerprint(l.meta?.fingerprint) ? l.meta.fingerprint : fingerprint(bead)
  const a: AttemptCtx = {
    slot: 1,
    n,
    target: bead,
    ready: 0,
    batchIds: [],
    fp,
    openChildrenBefore: new Set(),
    beadsBefore: snap.beads.length,
    token: '',
    startedAt,
    mark: null,
    ws,
    headBefore: null,
  }
  record(r, a, NO_DISPATCH, 'COMPLETE', null)
  r.ledger.closed(l.bead)
  return runFrom(r, {kind: 'gated', a, res: NO_DISPATCH, outcome: 'COMPLETE'})
}

/** SPEC 18.2; a Stop when finishing an attempt stopped the run (an unreadable review, a signal) */
export async function reconcile(r: Run): Promise<Step> {
  const landing = r.d.landing
  if (!landing?.leftovers) return 'continue'
  let snap = await r.d.tracker.read()
  let items
  try {
    await payOwedReopens(r, snap)
    items = await landing.leftovers()
    await landing.prunePreserved?.((line) => r.d.out.normal(line))
  } catch (error) {
    // outside git, or no base branch (one worker on a detached HEAD): nothing helix could have left
    r.log?.event('reconcile skipped', {error: errorMessage(error)})
    return 'continue'
  }
  if (items.length === 0) return 'continue'
  // SPEC 20.2: a --remote run's leftovers land only through that remote (their claim, their queue)
  const foreign = items.find((l) => typeof l.meta?.remote === 'string' && l.meta.remote !== landing.remote)
  if (foreign) {
    const name = sanitize(String(foreign.meta?.remote))
    const msg = `helix: ${sanitize(foreign.bead)} attempt ${foreign.attempt} was left by 'helix run --remote ${name}'; run 'helix run --remote ${name}' to finish it (a plain run would land it on the local base only)`
    return new Stop('error', msg, msg.replace(/^helix: /, ''))
  }
  snap = await r.d.tracker.read()
  let stop: Stop | null = null
  let plan
  try {
    plan = landing.planLeftovers ? await landing.planLeftovers(items) : planReconcile(snap, items)
  } catch (error) {
    // the remote could not judge them now: they stay for the next start, untouched
    r.d.out.both(`helix: leftover attempts not reconciled: ${sanitize(errorMessage(error))}`)
    return 'continue'
  }
  for (const act of plan) {
    const l = act.l
    if ((r.aborted || stop) && act.kind === 'finish') {
      // a stop during reconciliation: what is not finished is kept and its bead reopened, as for any interrupted attempt
      const ref = (await landing.preserveLeftover?.(l)) ?? null
      await reopenNotLanded(r, l.bead, 'interrupted', ref)
      continue
    }
    switch (act.kind) {
      case 'keep':
        break
      case 'discard':
        await landing.discard?.(l)
        r.log?.event('leftover removed', {bead: l.bead, attempt: l.attempt})
        break
      case 'preserve':
      case 'drop': {
        // a --remote landing knows from its plan whether to count and release (preserve) or not (drop)
        const ref = (await landing.preserveLeftover?.(l)) ?? null
        r.d.out.normal(`helix: kept ${sanitize(l.bead)} attempt ${l.attempt} of a run that ended${ref ? ` at ${sanitize(ref)}` : ''}${act.why ? ` (${sanitize(act.why)})` : ''}`)
        break
      }
      case 'finish': {
        const bead = snap.byId.get(l.bead) as Bead
        if (r.o.land === 'none') {
          // kept as a branch, as an uninterrupted --land none attempt would have been
          const ws = await landing.adopt?.(l, 1)
          if (ws) await landing.keepBranch(ws)
          else await landing.preserveLeftover?.(l)
          break
        }
        const step = await finish(r, act, bead, snap)
        if (step instanceof Stop) stop = step
        snap = await r.d.tracker.read()
        break
      }
      default: {
        const never: never = act.kind
        throw new Error(`unhandled reconcile action ${String(never)}`)
      }
    }
  }
  return stop ?? 'continue'
}
