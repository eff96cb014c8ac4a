/** Queue drain (SPEC 5.7): the check agent's NEXT_ACTION and the bounded follow-up actions. */
import {judgeAction} from '../agents/judge.js'
import {dispatchPausing} from './dispatch.js'
import {anySelectable} from './selectable.js'
import {Stop, interruptStop, type Step} from './stop.js'
import type {Run} from './supervisor.js'
import {EXIT} from '../util/errors.js'

/** a drain/periodic action; true when it succeeded */
export async function runAction(r: Run, action: 'alignment' | 'plan' | 'polish' | 'backfill', scope: string): Promise<boolean> {
  const prompt = await r.d.agents.prompt(action, {scope})
  await r.ledger.save(action)
  const res = await dispatchPausing(r, r.d.agents.impl, action, prompt)
  await r.ledger.save('running')
  // the one judgement the one-shot commands use too (agents/judge.ts)
  const j = judgeAction(action, res)
  if (j.kind !== 'done') return false
  if (j.done.action === 'backfill') return r.d.gates.exists(j.done.report)
  return true
}

/** Runs only when every slot is idle and nothing is selectable or backing off. */
export async function drain(r: Run): Promise<Step> {
  r.exclude.clear()
  const prompt = await r.d.agents.prompt('check', {scope: 'repo'})
  await r.ledger.save('check')
  const res = await dispatchPausing(r, r.d.agents.impl, 'check', prompt)
  await r.ledger.save('running')
  if (r.aborted) return interruptStop(r.o.signal)
  const j = judgeAction('check', res)
  if (j.kind === 'unreadable') return new Stop('error', EXIT.ERROR, `helix: ${j.message}`)
  if (j.kind !== 'done' || j.done.action !== 'check') return new Stop('error', EXIT.ERROR, 'helix: check failed after queue drain')
  const code = j.done.next
  r.log?.event('check', {next_action: code})
  const stopAfter = () => new Stop('completed', EXIT.OK, `helix: stopping after check returned ${code}`)
  const bounded = async (action: 'plan' | 'polish' | 'alignment', label: string): Promise<Step> => {
    if (r.drainStreak >= 3) return new Stop('completed', EXIT.OK, `helix: stopping: check returned ${code} 3 times without new ready work`)
    r.d.out.normal(`helix: queue drained, running ${label}`)
    const ok = await runAction(r, action, 'repo')
    if (r.aborted) return interruptStop(r.o.signal)
    if (!ok) return new Stop('error', EXIT.ERROR, `helix: ${label} failed after queue drain`)
    if (action === 'alignment') r.alignedSinceBuild = true
    r.drainStreak++
    return 'continue'
  }
  switch (code) {
    case 'BUILD': {
      r.buildStreak++
      if (r.buildStreak < 2) return 'continue'
      const rec = await r.d.recoverOrphans((line) => r.d.out.normal(line))
      r.buildStreak = 0
      if (rec.recovered.length > 0) return 'continue'
      return new Stop('completed', EXIT.OK, 'helix: no selectable issues after orphan recovery — stopping')
    }
    case 'DESIGN':
      return bounded('plan', 'design')
    case 'POLISH':
      return bounded('polish', 'polish')
    case 'ALIGN':
      if (r.o.autoAlign && !r.alignedSinceBuild) return bounded('alignment', 'alignment')
      return stopAfter()
    case 'BACKFILL': {
      if (r.backfilledSinceBuild) return stopAfter()
      r.d.out.normal('helix: queue drained, running backfill')
      const ok = await runAction(r, 'backfill', 'repo')
      if (r.aborted) return interruptStop(r.o.signal)
      if (!ok) return new Stop('error', EXIT.ERROR, 'helix: backfill failed after queue drain')
      r.backfilledSinceBuild = true
      return 'continue'
    }
    case 'STOP': {
      if (!r.o.autoAlign || r.alignedSinceBuild) return stopAfter()
      r.d.out.normal('helix: queue empty, running alignment before stopping')
      const ok = await runAction(r, 'alignment', 'repo')
      if (r.aborted) return interruptStop(r.o.signal)
      if (!ok) return new Stop('error', EXIT.ERROR, 'helix: alignment failed after queue drain')
      r.alignedSinceBuild = true
      if (await anySelectable(r)) return 'continue'
      return stopAfter()
    }
    default:
      return stopAfter()
  }
}
