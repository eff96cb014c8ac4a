import {Args} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {agentFlags} from '../cli/agent-flags.js'
import {runOneShotCommand} from '../cli/oneshot-command.js'

export default class Align extends HelixCommand {
  static override description = 'Run one alignment pass: reconcile code, specs and tracker'
  static override args = {
    scope: Args.string({description: 'what to look at (default: repo)', required: false}),
  }
  static override flags = {
    ...agentFlags,
  }
  static override strict = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Align)
    await runOneShotCommand(this, 'alignment', args.scope, flags)
  }
}
