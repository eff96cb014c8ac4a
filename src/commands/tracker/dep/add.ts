import * as Args from '@oclif/core/args'
import {HelixCommand} from '../../../cli/base-command.js'
import {projectPaths} from '../../../util/root.js'
import {sanitize} from '../../../util/sanitize.js'
import {depAdd, fenceFromEnv} from '../../../tracker/ops.js'

export default class TrackerDepAdd extends HelixCommand {
  static override description = 'Make <id> depend on <depends-on> (refuses self, unknown ids, cycles)'
  static override args = {
    id: Args.string({required: true, description: 'the bead that waits'}),
    'depends-on': Args.string({required: true, description: 'the bead it waits for'}),
  }

  async run(): Promise<void> {
    const {args} = await this.parse(TrackerDepAdd)
    const r = await depAdd(projectPaths(), args.id, args['depends-on'], fenceFromEnv())
    const [a, b] = [sanitize(args.id), sanitize(args['depends-on'])]
    this.out(r.changed ? `${a} now depends on ${b}` : `${a} already depends on ${b}`)
  }
}
