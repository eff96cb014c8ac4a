import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {HelixError, EXIT} from '../../util/errors.js'
import {sanitizeBlock} from '../../util/sanitize.js'
import type {ActionName} from '../../agents/types.js'

export default class AgentCheck extends HelixCommand {
  static override summary = 'Run an agent once per HELIX_ACTION in a throw-away project and say what it answered'
  static override description =
    'Each action gets the prompt and environment a run would give it, in a temp project removed afterwards. One line per action: ok, or MISSING with what a run needs (see docs/agent-protocol.md). Exit 1 when something required is missing.'

  static override args = {agent: Args.string({required: true, description: 'the agent: a path to an executable (./agent.sh), or codex / claude'})}

  static override flags = {
    action: Flags.string({description: 'check only these actions, comma-separated (default: all seven)', helpValue: 'A,B'}),
    timeout: Flags.string({description: 'seconds per action (default 60)', helpValue: 'SECONDS'}),
    verbose: Flags.boolean({description: "show each action's output (stdout and stderr) under its line (default: off)", default: false}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(AgentCheck)
    const {PROTOCOL_ACTIONS, checkAgentProtocol, renderVerdicts} = await import('../../agents/protocol-check.js')
    const {parseTimeout} = await import('../../agents/resolve.js')
    const {resolveAgent} = await import('../../agents/resolve.js')
    let actions: readonly ActionName[] = PROTOCOL_ACTIONS
    if (flags.action !== undefined) {
      const wanted = flags.action.split(',').map((s) => s.trim()).filter(Boolean)
      const unknown = wanted.filter((a) => !PROTOCOL_ACTIONS.includes(a as ActionName))
      if (unknown.length > 0 || wanted.length === 0) {
        throw new HelixError(`unknown action '${unknown[0] ?? ''}' for --action (one of ${PROTOCOL_ACTIONS.join(', ')})`, EXIT.ERROR)
      }
      actions = wanted as ActionName[]
    }
    const timeoutSec = flags.timeout === undefined ? 60 : parseTimeout(flags.timeout)
    const agent = resolveAgent(args.agent, process.env, process.cwd())
    const verdicts = await checkAgentProtocol({agent, actions, timeoutSec, verbose: flags.verbose})
    process.stdout.write(sanitizeBlock(renderVerdicts(agent.name, verdicts)))
    if (verdicts.some((v) => !v.ok)) this.exit(EXIT.ERROR)
  }
}
