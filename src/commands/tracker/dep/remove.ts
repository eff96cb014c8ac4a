import * as Args from '@oclif/core/args'
import {HelixCommand} from '../../../cli/base-command.js'
import {projectPaths} from '../../../util/root.js'
import {sanitize} from '../../../util/sanitize.js'
import {depRemove, fenceFromEnv} from '../../../tracker/ops.js'

export default class TrackerDepRemove extends HelixCommand {
  static override description = 'Remove the dependency of <id> on <depends-on>'
  static override args = {
    id: Args.string({required: true, description: 'the bead that waits'}),
    'depends-on': Args.string({required: true, description: 'the bead it no longer waits for'}),
  }

  async run(): Promise<void> {
    const {args} = await this.parse(TrackerDepRemove)
    await depRemove(projectPaths(), args.id, args['depends-on'], fenceFromEnv())
    this.out(`${sanitize(args.id)} no longer depends on ${sanitize(args['depends-on'])}`)
  }
}
