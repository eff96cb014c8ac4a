import * as Args from '@oclif/core/args'
import {HelixCommand} from '../../cli/base-command.js'
import {runMergeDriver} from '../../remote/merge-driver.js'
import {sanitize} from '../../util/sanitize.js'

export default class TrackerMerge extends HelixCommand {
  static override description = 'Git merge driver for .ddx/beads.jsonl: three-way merge by bead id, field by field; writes the result over OURS (registered by tracker init as `helix tracker merge %O %A %B`)'
  static override args = {
    base: Args.string({required: true, description: 'the merge base version (%O)'}),
    ours: Args.string({required: true, description: 'our version (%A); receives the result'}),
    theirs: Args.string({required: true, description: 'their version (%B)'}),
  }

  async run(): Promise<void> {
    const {args} = await this.parse(TrackerMerge)
    // works on the three files alone: git runs drivers from the work tree's top level, which need not hold .ddx/
    const {notices} = await runMergeDriver({base: args.base, ours: args.ours, theirs: args.theirs})
    for (const n of notices) this.err(`helix: ${sanitize(n)}`)
  }
}
