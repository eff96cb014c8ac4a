import {Args, Flags} from '@oclif/core'
import {HelixCommand} from '../../util/base-command.js'
import {projectPaths} from '../../util/root.js'
import {createBead, parseSetPairs} from '../../tracker/ops.js'
import {serializeBead} from '../../tracker/codec.js'

export default class TrackerCreate extends HelixCommand {
  static override description = 'Create a bead; prints the new id (or the record with --json)'
  static override args = {title: Args.string({required: true, description: 'title (quote it)'})}
  static override flags = {
    type: Flags.string({description: 'issue type (task, epic, bug, chore, …) (default: task)'}),
    priority: Flags.string({description: 'priority 0-4 (0 highest, default 2)'}),
    labels: Flags.string({description: 'comma-separated labels (default: none)'}),
    parent: Flags.string({description: 'parent epic id (default: none)'}),
    deps: Flags.string({description: 'comma-separated ids this bead depends on (default: none)'}),
    description: Flags.string({description: 'what the bead is about (default: empty)'}),
    acceptance: Flags.string({description: 'acceptance criteria (default: none)'}),
    notes: Flags.string({description: 'notes (default: none)'}),
    'spec-id': Flags.string({description: 'governing spec id (default: none)'}),
    design: Flags.string({description: 'design notes (default: none)'}),
    'execution-eligible': Flags.string({options: ['true', 'false'], description: 'false keeps the bead out of ready (default: eligible)'}),
    'superseded-by': Flags.string({description: 'id of the bead that replaces this one (default: none)'}),
    replaces: Flags.string({description: 'id of the bead this one replaces (default: none)'}),
    set: Flags.string({multiple: true, multipleNonGreedy: true, description: 'key=value (repeatable) (default: none)'}),
    json: Flags.boolean({description: 'print the stored record'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(TrackerCreate)
    const bead = await createBead(
      projectPaths(),
      {
        title: args.title,
        type: flags.type,
        priority: flags.priority,
        labels: flags.labels,
        parent: flags.parent,
        deps: flags.deps,
        description: flags.description,
        acceptance: flags.acceptance,
        notes: flags.notes,
        specId: flags['spec-id'],
        design: flags.design,
        executionEligible: flags['execution-eligible'],
        supersededBy: flags['superseded-by'],
        replaces: flags.replaces,
        set: parseSetPairs(flags.set),
        warn: (line) => this.err(line),
      },
      process.env,
    )
    this.out(flags.json ? serializeBead(bead) : bead.id)
  }
}
