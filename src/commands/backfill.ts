import {Args} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {agentFlags} from '../cli/agent-flags.js'
import {runOneShotCommand} from '../cli/oneshot-command.js'

export default class Backfill extends HelixCommand {
  static override description = 'Run one backfill pass: reconstruct missing specs and designs from the code'
  static override args = {
    scope: Args.string({description: 'what to look at (default: repo)', required: false}),
  }
  static override flags = {
    ...agentFlags,
  }
  static override strict = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Backfill)
    await runOneShotCommand(this, 'backfill', args.scope, flags)
  }
}
