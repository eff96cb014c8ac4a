import {Args, Flags} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {agentFlags} from '../cli/agent-flags.js'
import {runOneShotCommand} from '../cli/oneshot-command.js'

export default class Review extends HelixCommand {
  static override description = 'Run a fresh-eyes review (exit 10 when it found issues)'
  static override args = {
    scope: Args.string({description: 'what to look at (default: last-commit)', required: false}),
  }
  static override flags = {
    ...agentFlags,
    'review-agent': Flags.string({description: 'review agent (default: HELIX_REVIEW_AGENT, else the other of codex/claude on PATH)', helpValue: 'AGENT'}),
  }
  static override strict = true

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Review)
    await runOneShotCommand(this, 'review', args.scope, flags)
  }
}
