import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {trackerShowOutput} from '../../tracker/show-close.js'

export default class TrackerShow extends HelixCommand {
  static override description = 'Show one bead'
  static override args = {id: Args.string({required: true, description: 'bead id'})}
  static override flags = {json: Flags.boolean({description: 'print the record as JSON'})}

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TrackerShow)
    process.stdout.write(await trackerShowOutput(args.id, {json: flags.json}))
  }
}
