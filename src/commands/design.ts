import {Args} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {agentFlags} from '../cli/agent-flags.js'
import {runOneShotCommand} from '../cli/oneshot-command.js'

export default class Design extends HelixCommand {
  static override description = 'Run one plan pass: designs and implementable beads for a scope'
  static override args = {
    scope: Args.string({description: 'what to look at (default: repo)', required: false}),
  }
  static override flags = {
    ...agentFlags,
  }
  static override strict = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Design)
    await runOneShotCommand(this, 'plan', args.scope, flags)
  }
}
