/**
 * Shared body of the one-shot agent commands (check, align, backfill, design,
 * polish, review). Not a command itself: no default export.
 */
import {HelixCommand} from '../util/base-command.js'
import type {OneShotAction} from '../agents/oneshot.js'
import {agentFlagsInput, type AgentFlagValues} from './agent-flags.js'

export async function runOneShotCommand(cmd: HelixCommand, action: OneShotAction, scope: string | undefined, flags: AgentFlagValues): Promise<void> {
  const {runOneShot} = await import('../agents/oneshot.js')
  const {killAllAgentGroups} = await import('../agents/runner.js')
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
  const onSigint = onSignal(130)
  const onSigterm = onSignal(143)
  const onSighup = onSignal(129) // a closed terminal takes the agent with it
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
    })
  } finally {
    process.off('SIGINT', onSigint)
    process.off('SIGTERM', onSigterm)
    process.off('SIGHUP', onSighup)
  }
  if (signalExit) code = signalExit
  if (code !== 0) cmd.exit(code)
}
