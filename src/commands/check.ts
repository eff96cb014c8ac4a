import {Args} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {agentFlags} from '../cli/agent-flags.js'
import {runOneShotCommand} from '../cli/oneshot-command.js'

export default class Check extends HelixCommand {
  static override description = 'Ask the check agent what should happen next; prints NEXT_ACTION (exit 0 only with a valid trailer)'
  static override args = {
    scope: Args.string({description: 'what to look at (default: repo)', required: false}),
  }
  static override flags = {
    ...agentFlags,
  }
  static override strict = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Check)
    await runOneShotCommand(this, 'check', args.scope, flags)
  }
}
