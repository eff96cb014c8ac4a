import {Args} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {agentFlags} from '../cli/agent-flags.js'
import {runOneShotCommand} from '../cli/oneshot-command.js'

export default class Polish extends HelixCommand {
  static override description = 'Run one polish pass over the tracker for a scope'
  static override args = {
    scope: Args.string({description: 'what to look at (default: repo)', required: false}),
  }
  static override flags = {
    ...agentFlags,
  }
  static override strict = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Polish)
    await runOneShotCommand(this, 'polish', args.scope, flags)
  }
}
