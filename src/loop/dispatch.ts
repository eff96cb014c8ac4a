/**
 * Every agent call of the loop goes through here (SPEC 3, 14, 16.3): the budget
 * check before it starts, the lines after it, the agent's health. An unavailable
 * agent stops the run (a returned Stop, exit 4); a quota answer is handed back to the
 * caller, which unclaims (implementation) or pauses and calls again (the rest).
 * Stops are returned, never thrown (stop.ts).
 */
import type {ActionName, AgentSpec, DispatchResult, SessionLogLike} from '../agents/types.js'
import {sanitize} from '../util/sanitize.js'
import {budgetReached, durationText, hhmm, planQuotaPause} from './systemic.js'
import {Stop, interruptStop, type Step} from './stop.js'
import type {Scope} from './scope.js'
import {windowOf} from './quota-state.js'
import {shortAgentName, stallWords, timeoutWords} from './wording.js'
import {recordBeadSpend, type SpendScope} from './bead-budget.js'
import {groupDigits} from '../util/numbers.js'

/** the run's budgets against its totals */
export type BudgetStopScope = Scope<{o: 'maxTokens' | 'maxCost'; ledger: 'state'}>
/** one agent call: the agents port, its lines, the slot's pid and output, the totals, the agent's health */
export type DispatchScope = BudgetStopScope &
  SpendScope &
  Scope<{
    d: 'agents' | 'out'
    o: 'signal' | 'stallTimeoutSec' | 'timeoutSec'
    ledger: 'output' | 'agentPid' | 'addTokens' | 'quotaEvent'
    run: 'log' | 'workers' | 't' | 'now' | 'notify'
  }>
/** a quota pause: the plan, the sleep, the paused phase and its notifications */
export type PauseScope = Scope<{
  d: 'out' | 'sleep'
  o: 'maxQuotaWaitSec' | 'signal'
  ledger: 'quota' | 'quotaEvent' | 'pause' | 'resume' | 'save'
  run: 't' | 'now' | 'notify' | 'aborted'
}>
/** a call that pauses on a quota answer and runs again */
export type PausingScope = DispatchScope & PauseScope

export interface DispatchExtra {
  beadId?: string
  claimToken?: string
  slot?: number
  cwd?: string
  env?: Record<string, string>
}

/** The stop once a budget is reached: no further dispatch starts (SPEC 14.6); null while under it. */
export function budgetStop(r: BudgetStopScope): Stop | null {
  const s = r.ledger.state
  const line = budgetReached({maxTokens: r.o.maxTokens, maxCost: r.o.maxCost}, s.total_tokens, s.total_cost_usd ?? 0)
  return line ? new Stop('budget', line, line.replace(/^helix: /, '')) : null
}

/** One agent call; a Stop when the run must stop (budget reached before it, the agent unavailable after it). */
export async function dispatch(r: DispatchScope, agent: AgentSpec, action: ActionName, prompt: string, x: DispatchExtra = {}): Promise<DispatchResult | Stop> {
  const over = budgetStop(r)
  if (over) return over
  const log = r.log as SessionLogLike
  const slot = x.slot ?? 1
  // SPEC 15.4: with workers > 1 a call made for a slot tags its log records and its lines
  const tagged = r.workers > 1 && x.slot !== undefined
  const res = await r.d.agents.dispatch({
    agent,
    action,
    prompt,
    log,
    ...(x.beadId ? {beadId: x.beadId} : {}),
    ...(x.claimToken ? {claimToken: x.claimToken} : {}),
    onLine: (line) => {
      r.d.out.agent(line)
      if (line.trim() !== '') r.ledger.output(slot, sanitize(line).slice(0, 300))
    },
    ...(r.o.signal ? {signal: r.o.signal} : {}),
    ...(x.cwd ? {cwd: x.cwd} : {}),
    ...(x.env ? {env: x.env} : {}),
    ...(r.o.stallTimeoutSec ? {stallTimeoutSec: r.o.stallTimeoutSec} : {}),
    ...(tagged ? {slot} : {}),
    // run-state workers[].pid: the slot's agent while it runs
    ...(x.slot !== undefined ? {onSpawn: (pid: number) => r.ledger.agentPid(slot, pid)} : {}),
  })
  if (x.slot !== undefined) r.ledger.agentPid(slot, null)
  r.ledger.addTokens(res.tokens, res.verdict.costUsd)
  // SPEC 14.6: the bead's own spend, kept on the bead across attempts, runs and crashes (the implementation's after classify's tracker check)
  if (x.beadId && action === 'review') await recordBeadSpend(r, x.beadId, res.tokens, res.verdict.costUsd ?? 0)
  const w = tagged ? ` w${slot}` : ''
  // the L-range spans this dispatch's records; other slots' records may interleave, `(wN)` picks them out
  const range = res.logRange ? `L${res.logRange.first}–L${res.logRange.last}${tagged ? ` (w${slot})` : ''}` : null
  const secs = Math.round(res.durationMs / 1000)
  const tokens = !res.verdict.tokensReported ? '' : `, ${groupDigits(res.tokens)} tokens`
  // a command agent's path by its last part: the line stays on one 80-column row
  const name = sanitize(shortAgentName(agent.name))
  // SPEC 16.3: the implementation keeps `codex complete (…)`, every other call names its action
  const act = action === 'implementation' ? name : `${name} ${action}`
  // SPEC 22.2: an attempt the stall guard or the timeout killed is not "complete", nor one
  // helix stopped (a signal, a lost claim): that agent did not finish, it was killed
  const what =
    res.end === 'aborted'
      ? `${act} killed (stopped by helix after ${secs}s${tokens}`
      : res.end === 'stalled'
      ? `${act} stalled (${stallWords(r.o.stallTimeoutSec)}; killed`
      : res.end === 'timeout'
        ? `${act} timed out (${timeoutWords(r.o.timeoutSec)}; killed`
        : `${act} complete (rc=${res.rc}, ${secs}s${tokens}`
  if (res.end === 'timeout') r.d.out.normal(`helix: [${r.t()}]${w} ${name} timeout after ${r.o.timeoutSec ?? '?'}s — killed`)
  // no `log none in …` when the call wrote no output records
  const where = range ? ` — log ${range} in ${sanitize(log.path)}` : ''
  // one line per dispatch, in both modes (and so once in the session log)
  r.d.out.both(`helix: [${r.t()}]${w} ${what})${where}`)
  const health = res.verdict.health
  switch (health.kind) {
    case 'ok':
      r.ledger.quotaEvent({kind: 'ok'})
      break
    case 'unavailable': {
      const reason = sanitize(health.reason)
      r.log?.event('agent unavailable', {agent: agent.name, reason: health.reason})
      void r.notify('agent_unavailable', {agent: agent.name, reason: health.reason})
      return new Stop('agent_unavailable', `helix: agent ${name} unavailable: ${reason}`, reason)
    }
    case 'quota':
      // from this moment no slot starts an attempt; pauseForQuota ends the hold
      r.ledger.quotaEvent({kind: 'quota', now: r.now()})
      r.log?.event('agent quota', {agent: agent.name, reset_at: health.resetAt, message: health.message})
      break
  }
  return res
}

/** A quota pause (SPEC 14.3): 'continue' after the sleep, or the stop (beyond --max-quota-wait, interrupt). */
export async function pauseForQuota(r: PauseScope, agent: AgentSpec, resetAt: string | null, message: string): Promise<Step> {
  r.ledger.quotaEvent({kind: 'quota', now: r.now()})
  try {
    return await pause(r, agent, resetAt, message)
  } finally {
    r.ledger.quotaEvent({kind: 'resume'})
  }
}

async function pause(r: PauseScope, agent: AgentSpec, resetAt: string | null, message: string): Promise<Step> {
  const now = r.now()
  const w = windowOf(r.ledger.quota, now)
  const plan = planQuotaPause({now, resetAt, pauseStart: w.start, probe: w.probe, maxWaitSec: r.o.maxQuotaWaitSec ?? 21600})
  if (plan.kind === 'stop') return new Stop('quota', plan.message, plan.message.replace(/^helix: /, ''))
  r.ledger.quotaEvent({kind: 'sleep', until: plan.until, probed: resetAt === null})
  const name = sanitize(agent.name)
  r.d.out.both(`helix: [${r.t()}] ${name} quota exhausted; pausing until ${hhmm(plan.until)} (in ${durationText(plan.ms)})`)
  r.ledger.pause(plan.until, `quota: ${sanitize(message)}`.slice(0, 300))
  await r.ledger.save('paused')
  void r.notify('paused', {agent: agent.name, paused_until: plan.until.toISOString(), reason: message})
  const t0 = r.now().getTime()
  await r.d.sleep(plan.ms, r.o.signal)
  r.ledger.resume(r.now().getTime() - t0)
  if (r.aborted) return interruptStop(r.o.signal)
  r.d.out.normal(`helix: [${r.t()}] quota pause over; resuming`)
  void r.notify('resumed', {agent: agent.name})
  await r.ledger.save('running')
  return 'continue'
}

/** review, check and the drain actions: a quota answer pauses the run, then the same call runs again */
export async function dispatchPausing(r: PausingScope, agent: AgentSpec, action: ActionName, prompt: string, x: DispatchExtra = {}): Promise<DispatchResult | Stop> {
  for (;;) {
    const res = await dispatch(r, agent, action, prompt, x)
    if (res instanceof Stop || res.verdict.health.kind !== 'quota' || r.aborted) return res
    const health = res.verdict.health
    const step = await pauseForQuota(r, agent, health.resetAt, health.message)
    if (step instanceof Stop) return step
  }
}
