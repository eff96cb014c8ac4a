/**
 * Shared body of the one-shot agent commands (check, align, backfill, design,
 * polish, review). Not a command itself: no default export.
 */
import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import type * as Interfaces from '@oclif/core/interfaces'
import {HelixCommand} from './base-command.js'
import {EXIT} from '../util/errors.js'
import type {OneShotAction} from '../agents/oneshot.js'
import {agentFlags, agentFlagsInput, type AgentFlagValues} from './agent-flags.js'

/**
 * The command class of one one-shot action: `[scope]` plus the agent flags
 * (review also takes `--review-agent`). Each file in src/commands/ exports one.
 */
export function oneShotCommand(action: OneShotAction, description: string) {
  const defaultScope = action === 'review' ? 'last-commit' : 'repo'
  const flags: Interfaces.FlagInput = {...agentFlags}
  if (action === 'review') {
    flags['review-agent'] = Flags.string({description: 'review agent (default: HELIX_REVIEW_AGENT, else the other of codex/claude on PATH)', helpValue: 'AGENT'})
  }
  return class OneShot extends HelixCommand {
    static override description = description
    static override args = {
      scope: Args.string({description: `what to look at (default: ${defaultScope})`, required: false}),
    }
    static override flags = flags
    static override strict = true

    async run(): Promise<void> {
      const {args, flags} = await this.parse(OneShot)
      await runOneShotCommand(this, action, args.scope, flags as unknown as AgentFlagValues)
    }
  }
}

export async function runOneShotCommand(cmd: HelixCommand, action: OneShotAction, scope: string | undefined, flags: AgentFlagValues): Promise<void> {
  const {runOneShot} = await import('../agents/oneshot.js')
  const {killAllAgentGroups} = await import('../proc/groups.js')
  const ac = new AbortController()
  let signalExit = 0
  // First SIGINT/SIGTERM: abort → the agent's group gets SIGTERM, then SIGKILL after
  // the grace, and we exit 130/143. A second signal: SIGKILL the groups now and exit.
  const onSignal = (code: number) => () => {
    if (signalExit) {
      killAllAgentGroups('SIGKILL')
      process.exit(signalExit)
    }
    signalExit = code
    ac.abort()
  }
  const onSigint = onSignal(EXIT.SIGINT)
  const onSigterm = onSignal(EXIT.SIGTERM)
  const onSighup = onSignal(EXIT.SIGHUP) // a closed terminal takes the agent with it
  process.on('SIGINT', onSigint)
  process.on('SIGTERM', onSigterm)
  process.on('SIGHUP', onSighup)
  let code: number
  try {
    code = await runOneShot({
      action,
      scope,
      agentFlags: agentFlagsInput(flags),
      dryRun: flags['dry-run'],
      signal: ac.signal,
      out: {stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t)},
      openLog: async (logDir, at) => {
        const {loadSessionLogger, openSessionLog} = await import('../output/session-log.js')
        await loadSessionLogger()
        return openSessionLog(logDir, at)
      },
    })
  } finally {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
    process.off('SIGHUP', onSighup)
  }
  if (signalExit) code = signalExit
  if (code !== EXIT.OK) cmd.exit(code)
}
