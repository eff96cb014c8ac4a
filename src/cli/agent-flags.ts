/**
 * The agent flags every agent-dispatching command takes (SPEC 3, 4, 8), as one
 * reusable oclif flag set. Not a command: this module exports no Command class.
 *
 *   import {agentFlags, agentFlagsInput} from '../../cli/agent-flags.js'  (from src/commands/<topic>/)
 *   static flags = {...agentFlags}
 *   resolveAgentOptions(agentFlagsInput(flags), process.env)
 */
import * as Flags from '@oclif/core/flags'
import type {AgentOptionsInput} from '../agents/resolve.js'

export const agentFlags = {
  agent: Flags.string({description: 'agent: codex, claude, or a path to an executable (default: HELIX_AGENT or codex)', helpValue: 'AGENT'}),
  claude: Flags.boolean({description: 'short for --agent claude', default: false}),
  codex: Flags.boolean({description: 'short for --agent codex', default: false}),
  model: Flags.string({description: 'model passed to the agent (default: HELIX_MODEL)', helpValue: 'MODEL'}),
  effort: Flags.string({description: 'reasoning effort passed to the agent (default: HELIX_EFFORT, else per action)', helpValue: 'EFFORT'}),
  timeout: Flags.string({description: 'seconds per agent call (default: HELIX_AGENT_TIMEOUT or 2700)', helpValue: 'SECONDS'}),
  'dry-run': Flags.boolean({description: 'print the agent command line and prompt; start nothing', default: false}),
}

export interface AgentFlagValues {
  agent?: string
  claude?: boolean
  codex?: boolean
  model?: string
  effort?: string
  timeout?: string
  'dry-run'?: boolean
  'review-agent'?: string
}

/** Parsed flag values → the domain's input shape. */
export function agentFlagsInput(flags: AgentFlagValues): AgentOptionsInput {
  return {
    agent: flags.agent,
    claude: flags.claude,
    codex: flags.codex,
    model: flags.model,
    effort: flags.effort,
    timeout: flags.timeout,
    reviewAgent: flags['review-agent'],
  }
}
