/**
 * Every agent call of the loop goes through here (SPEC 3, 14, 16.3): the budget
 * check before it starts, the lines after it, the agent's health. An unavailable
 * agent stops the run (StopNow, exit 4); a quota answer is handed back to the
 * caller, which unclaims (implementation) or pauses and calls again (the rest).
 */
import type {ActionName, AgentSpec, DispatchResult, SessionLogLike} from '../agents/types.js'
import {sanitize} from '../util/sanitize.js'
import {budgetReached, durationText, hhmm, planQuotaPause} from './health.js'
import {Stop, StopNow, interruptStop, type Step} from './stop.js'
import type {Run} from './supervisor.js'
import {EXIT} from '../util/errors.js'

export interface DispatchExtra {
  beadId?: string
  claimToken?: string
  slot?: number
  cwd?: string
  env?: Record<string, string>
}

/** Throws StopNow when a budget is reached: no further dispatch starts (SPEC 14.6). */
export function checkBudget(r: Run): void {
  const s = r.ledger.state
  const line = budgetReached({maxTokens: r.o.maxTokens, maxCost: r.o.maxCost}, s.total_tokens, s.total_cost_usd ?? 0)
  if (line) throw new StopNow(new Stop('budget', EXIT.OK, line, line.replace(/^helix: /, '')))
}

export async function dispatch(r: Run, agent: AgentSpec, action: ActionName, prompt: string, x: DispatchExtra = {}): Promise<DispatchResult> {
  checkBudget(r)
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
  r.ledger.addTokens(res.tokens, res.costUsd ?? 0)
  const w = tagged ? ` w${slot}` : ''
  // the L-range spans this dispatch's records; other slots' records may interleave, `(wN)` picks them out
  const range = res.logRange ? `L${res.logRange.first}–L${res.logRange.last}${tagged ? ` (w${slot})` : ''}` : 'none'
  const secs = Math.round(res.durationMs / 1000)
  const tokens = res.tokensReported === false ? '' : `, ${res.tokens.toLocaleString('en-US')} tokens`
  const name = sanitize(agent.name)
  // SPEC 16.3: the implementation keeps `codex complete (…)`, every other call names its action
  const what = action === 'implementation' ? `${name} complete` : `${name} ${action} complete`
  if (res.timedOut) r.d.out.normal(`helix: [${r.t()}]${w} ${name} timeout after ${r.o.timeoutSec ?? '?'}s — killed`)
  if (res.stalled) r.d.out.normal(`helix: [${r.t()}]${w} ${name} stalled: no output for ${r.o.stallTimeoutSec ?? '?'}s — killed`)
  r.d.out.summary(`helix: [${r.t()}]${w} ${what} (rc=${res.rc}, ${secs}s${tokens}) — log ${range} in ${log.path}`)
  r.d.out.normal(`helix: [${r.t()}]${w} ${name} ${action} finished (rc=${res.rc}, ${secs}s${tokens})`)
  const health = res.health ?? {kind: 'ok'}
  switch (health.kind) {
    case 'ok':
      r.quota = null
      break
    case 'unavailable': {
      const reason = sanitize(health.reason)
      r.log?.event('agent unavailable', {agent: agent.name, reason: health.reason})
      void r.notify('agent_unavailable', {agent: agent.name, reason: health.reason})
      throw new StopNow(new Stop('agent_unavailable', EXIT.AGENT_UNAVAILABLE, `helix: agent ${name} unavailable: ${reason}`, reason))
    }
    case 'quota':
      // from this moment no slot starts an attempt; pauseForQuota ends the hold
      r.pausing = true
      r.log?.event('agent quota', {agent: agent.name, reset_at: health.resetAt, message: health.message})
      break
  }
  return res
}

/** A quota pause (SPEC 14.3): 'continue' after the sleep, or the stop (beyond --max-quota-wait, interrupt). */
export async function pauseForQuota(r: Run, agent: AgentSpec, resetAt: string | null, message: string): Promise<Step> {
  r.pausing = true
  try {
    return await pause(r, agent, resetAt, message)
  } finally {
    r.pausing = false
  }
}

async function pause(r: Run, agent: AgentSpec, resetAt: string | null, message: string): Promise<Step> {
  const now = r.now()
  if (!r.quota) r.quota = {start: now, probe: 0}
  const plan = planQuotaPause({now, resetAt, pauseStart: r.quota.start, probe: r.quota.probe, maxWaitSec: r.o.maxQuotaWaitSec ?? 21600})
  if (plan.kind === 'stop') return new Stop('quota', EXIT.AGENT_UNAVAILABLE, plan.message, plan.message.replace(/^helix: /, ''))
  if (resetAt === null) r.quota.probe++
  const name = sanitize(agent.name)
  r.d.out.both(`helix: [${r.t()}] ${name} quota exhausted; pausing until ${hhmm(plan.until)} (in ${durationText(plan.ms)})`)
  const s = r.ledger.state
  s.paused_until = plan.until.toISOString()
  s.pause_reason = `quota: ${sanitize(message)}`.slice(0, 300)
  await r.ledger.save('paused')
  void r.notify('paused', {agent: agent.name, paused_until: s.paused_until, reason: message})
  const t0 = r.now().getTime()
  await r.d.sleep(plan.ms, r.o.signal)
  r.pausedMs += Math.max(0, r.now().getTime() - t0)
  s.paused_until = null
  s.pause_reason = null
  if (r.aborted) return interruptStop(r.o.signal)
  r.d.out.normal(`helix: [${r.t()}] quota pause over; resuming`)
  void r.notify('resumed', {agent: agent.name})
  await r.ledger.save('running')
  return 'continue'
}

/** review, check and the drain actions: a quota answer pauses the run, then the same call runs again */
export async function dispatchPausing(r: Run, agent: AgentSpec, action: ActionName, prompt: string, x: DispatchExtra = {}): Promise<DispatchResult> {
  for (;;) {
    const res = await dispatch(r, agent, action, prompt, x)
    if (res.health?.kind !== 'quota' || r.aborted) return res
    const step = await pauseForQuota(r, agent, res.health.resetAt, res.health.message)
    if (step instanceof Stop) throw new StopNow(step)
  }
}
