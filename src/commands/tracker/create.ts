import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../../cli/base-command.js'
import {projectPaths} from '../../util/root.js'
import {createBead, parseSetPairs} from '../../tracker/ops.js'
import {sanitize} from '../../util/sanitize.js'
import {serializeBead} from '../../tracker/codec.js'
import {inputFromFlags} from '../../tracker/fields.js'
import {tableFlags} from '../../cli/field-flags.js'

export default class TrackerCreate extends HelixCommand {
  static override description = 'Create a bead; prints the new id (or the record with --json)'
  static override args = {title: Args.string({required: true, description: 'title (quote it)'})}
  static override flags = {
    // every plain field flag comes from the one field table (src/tracker/fields.ts)
    ...tableFlags('create'),
    labels: Flags.string({description: 'comma-separated labels (default: none)'}),
    deps: Flags.string({description: 'comma-separated ids this bead depends on (default: none)'}),
    set: Flags.string({multiple: true, multipleNonGreedy: true, description: 'key=value (repeatable) (default: none)'}),
    json: Flags.boolean({description: 'print the stored record'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TrackerCreate)
    const bead = await createBead(
      projectPaths(),
      {
        title: args.title,
        ...inputFromFlags('create', flags),
        labels: flags.labels,
        deps: flags.deps,
        set: parseSetPairs(flags.set),
        warn: (line) => this.err(sanitize(line)),
      },
      process.env,
    )
    this.out(flags.json ? serializeBead(bead) : sanitize(bead.id))
  }
}
