/**
 * The review-agent preflight of `doctor` and `run`: an agent that cannot
 * answer a review (no REVIEW_STATUS trailer) is caught at start, not after the night's
 * first epic. codex and claude answer from the prompt; a command agent is probed once
 * per version of its file (agents/protocol-check.ts, cached in .helix/agent-check.json).
 * HELIX_AGENT_PREFLIGHT=0 skips the probe; `--no-auto-review` makes it moot.
 */
import path from 'node:path'
import {defaultReviewAgent, resolveAgent, resolveAgentOptions, type AgentOptionsInput} from '../agents/resolve.js'
import {reviewPreflight, type ReviewPreflight} from '../agents/protocol-check.js'
import type {AgentSpec, Confine} from '../agents/types.js'
import {sanitize} from '../util/sanitize.js'

/** The review agent a run with these flags would use (loop wiring's rule), or null when it cannot be resolved (that error is reported elsewhere). */
export function reviewAgentOf(input: AgentOptionsInput, env: NodeJS.ProcessEnv, cwd: string): AgentSpec | null {
  try {
    if (input.reviewAgent) return resolveAgent(input.reviewAgent, env, cwd)
    return defaultReviewAgent(resolveAgentOptions(input, env, cwd).agent, env, cwd)
  } catch {
    return null
  }
}

export interface ReviewCheck {
  agent: AgentSpec
  result: ReviewPreflight
}

export async function checkReviewAgent(input: AgentOptionsInput, env: NodeJS.ProcessEnv, root: string, confine?: Confine, signal?: AbortSignal): Promise<ReviewCheck | null> {
  const agent = reviewAgentOf(input, env, root)
  if (!agent) return null
  return {agent, result: await reviewPreflight(agent, path.join(root, '.helix'), env, confine, signal)}
}

/** The fix line for an agent that cannot review. */
export function reviewFix(agent: AgentSpec): string {
  return `make it print REVIEW_STATUS (docs/agent-protocol.md; try 'helix agent check ${sanitize(agent.name)}'), choose another --review-agent, or run with --no-auto-review`
}

/**
 * run's preflight: the one-line refusal, or null when the review agent can review.
 * `signal` (the run's abort) ends the probe's agent and throws its reason.
 */
export async function runReviewPreflight(input: AgentOptionsInput, env: NodeJS.ProcessEnv, root: string, confine?: Confine, signal?: AbortSignal): Promise<string | null> {
  const c = await checkReviewAgent(input, env, root, confine, signal)
  if (!c || c.result.ok) return null
  return `review agent ${sanitize(c.agent.name)} ${sanitize(c.result.detail)}; ${reviewFix(c.agent)}`
}
