/**
 * Shared body of the one-shot agent commands (check, align, backfill, design,
 * polish, review). Not a command itself: no default export.
 */
import {HelixCommand} from '../util/base-command.js'
import type {OneShotAction} from '../agents/oneshot.js'
import {agentFlagsInput, type AgentFlagValues} from './agent-flags.js'

export async function runOneShotCommand(cmd: HelixCommand, action: OneShotAction, scope: string | undefined, flags: AgentFlagValues): Promise<void> {
  const {runOneShot} = await import('../agents/oneshot.js')
  const ac = new AbortController()
  let signalExit = 0
  const onSigint = () => {
    signalExit = 130
    ac.abort()
  }
  const onSigterm = () => {
    signalExit = 143
    ac.abort()
  }
  process.once('SIGINT', onSigint)
  process.once('SIGTERM', onSigterm)
  let code: number
  try {
    code = await runOneShot({
      action,
      scope,
      agentFlags: agentFlagsInput(flags),
      dryRun: flags['dry-run'],
      signal: ac.signal,
      out: {stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t)},
    })
  } finally {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
  }
  if (signalExit) code = signalExit
  if (code !== 0) cmd.exit(code)
}
