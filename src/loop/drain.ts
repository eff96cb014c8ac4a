/** Queue drain (SPEC 5.7): the check agent's NEXT_ACTION and the bounded follow-up actions. */
import {judgeAction} from '../agents/judge.js'
import {dispatchPausing, type PausingScope} from './dispatch.js'
import {anySelectable} from './selectable.js'
import {Stop, interruptStop, type Step} from './stop.js'
import type {RunScope, Scope} from './scope.js'

/** a drain or periodic action: its prompt, the phase, the call, the backfill report's existence */
export type ActionScope = PausingScope & Scope<{d: 'agents' | 'gates'; ledger: 'save'}>
import {alignedSinceBuild, backfilledSinceBuild, breakerDue, passesExhausted} from './drain-state.js'

/** a drain/periodic action; true when it succeeded, the Stop when the run must stop */
export async function runAction(r: ActionScope, action: 'alignment' | 'plan' | 'polish' | 'backfill', scope: string): Promise<boolean | Stop> {
  const prompt = await r.d.agents.prompt(action, {scope})
  await r.ledger.save(action)
  const res = await dispatchPausing(r, r.d.agents.impl, action, prompt)
  await r.ledger.save('running')
  if (res instanceof Stop) return res
  // the one judgement the one-shot commands use too (agents/judge.ts)
  const j = judgeAction(action, res)
  if (j.kind !== 'done') return false
  if (j.done.action === 'backfill') return r.d.gates.exists(j.done.report)
  return true
}

/** Runs only when every slot is idle and nothing is selectable or backing off. */
export async function drain(r: RunScope): Promise<Step> {
  r.exclude.clear()
  const prompt = await r.d.agents.prompt('check', {scope: 'repo'})
  await r.ledger.save('check')
  const res = await dispatchPausing(r, r.d.agents.impl, 'check', prompt)
  await r.ledger.save('running')
  if (r.aborted) return interruptStop(r.o.signal)
  if (res instanceof Stop) return res
  const j = judgeAction('check', res)
  if (j.kind === 'unreadable') return new Stop('error', `helix: ${j.message}`)
  if (j.kind !== 'done' || j.done.action !== 'check') return new Stop('error', 'helix: check failed after queue drain')
  const code = j.done.next
  r.log?.event('check', {next_action: code})
  const stopAfter = () => new Stop('completed', `helix: stopping after check returned ${code}`)
  const bounded = async (action: 'plan' | 'polish' | 'alignment', label: string): Promise<Step> => {
    if (passesExhausted(r.ledger.drain)) return new Stop('completed', `helix: stopping: check returned ${code} 3 times without new ready work`)
    r.d.out.normal(`helix: queue drained, running ${label}`)
    const ok = await runAction(r, action, 'repo')
    if (r.aborted) return interruptStop(r.o.signal)
    if (ok instanceof Stop) return ok
    if (!ok) return new Stop('error', `helix: ${label} failed after queue drain`)
    if (action === 'alignment') r.ledger.drainEvent({kind: 'aligned'})
    r.ledger.drainEvent({kind: 'pass'})
    return 'continue'
  }
  switch (code) {
    case 'BUILD': {
      r.ledger.drainEvent({kind: 'build'})
      if (!breakerDue(r.ledger.drain)) return 'continue'
      const rec = await r.d.recoverOrphans((line) => r.d.out.normal(line))
      r.ledger.drainEvent({kind: 'breaker'})
      if (rec.recovered.length > 0) return 'continue'
      return new Stop('completed', 'helix: no selectable issues after orphan recovery — stopping')
    }
    case 'DESIGN':
      return bounded('plan', 'design')
    case 'POLISH':
      return bounded('polish', 'polish')
    case 'ALIGN':
      if (r.o.autoAlign && !alignedSinceBuild(r.ledger.drain)) return bounded('alignment', 'alignment')
      return stopAfter()
    case 'BACKFILL': {
      if (backfilledSinceBuild(r.ledger.drain)) return stopAfter()
      r.d.out.normal('helix: queue drained, running backfill')
      const ok = await runAction(r, 'backfill', 'repo')
      if (r.aborted) return interruptStop(r.o.signal)
      if (ok instanceof Stop) return ok
      if (!ok) return new Stop('error', 'helix: backfill failed after queue drain')
      r.ledger.drainEvent({kind: 'backfilled'})
      return 'continue'
    }
    case 'STOP': {
      if (!r.o.autoAlign || alignedSinceBuild(r.ledger.drain)) return stopAfter()
      r.d.out.normal('helix: queue empty, running alignment before stopping')
      const ok = await runAction(r, 'alignment', 'repo')
      if (r.aborted) return interruptStop(r.o.signal)
      if (ok instanceof Stop) return ok
      if (!ok) return new Stop('error', 'helix: alignment failed after queue drain')
      r.ledger.drainEvent({kind: 'aligned'})
      if (await anySelectable(r)) return 'continue'
      return stopAfter()
    }
    default:
      return stopAfter()
  }
}
