import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {agentFlags} from '../cli/agent-flags.js'
import {armRunSignals} from '../cli/run-signals.js'
import {HelixCommand} from '../cli/base-command.js'
import {EXIT, HelixError} from '../util/errors.js'

export default class Build extends HelixCommand {
  static override summary = 'Run one implementation cycle on a bead'
  static override description =
    'One cycle of `helix run` on the ready bead matching the selector (id, parent, spec-id, label, or title substring), else on the next selection. Exit 0 when the bead was completed.'

  static override args = {
    selector: Args.string({description: 'bead id, parent id, spec-id, label, or title substring', required: false}),
  }

  static override flags = {
    ...agentFlags,
    'review-agent': Flags.string({description: 'review agent (default: HELIX_REVIEW_AGENT, else the other of codex/claude when installed, else the implementation agent)'}),
    'review-threshold': Flags.integer({description: 'review when the cycle changed at least N lines or 3 files (0 = always)', default: 100, min: 0}),
    'auto-review': Flags.boolean({description: 'post-implementation review (--no-auto-review disables)', allowNo: true, default: true}),
    summary: Flags.boolean({char: 's', description: 'summary lines only'}),
    quiet: Flags.boolean({char: 'q', description: 'do not echo agent output on stdout'}),
  }

  async run(): Promise<void> {
    // first of all: a SIGTERM from here on ends the cycle the orderly way (SPEC 5.10)
    armRunSignals()
    const {args, flags} = await this.parse(Build)
    if (args.selector !== undefined) {
      // a selector that names no bead at all is bad input: one line, before the run starts
      // (no mutex, no log, no run-state); a bead that matches but is not ready is the run's to say
      const [{projectPaths}, {readTracker}, {matchSelector}, {sanitize}] = await Promise.all([
        import('../util/root.js'),
        import('../tracker/store.js'),
        import('../loop/build-once.js'),
        import('../util/sanitize.js'),
      ])
      const snap = await readTracker(projectPaths(process.cwd(), process.env).file)
      if (!matchSelector(snap.beads, args.selector)) {
        throw new HelixError(`no bead matches '${sanitize(args.selector)}' (by id, parent, spec-id, label or title); 'helix tracker list' shows them`, EXIT.ERROR)
      }
    }
    const {runLoopCli} = await import('../cli/run-loop.js')
    const code = await runLoopCli({
      cwd: process.cwd(),
      env: process.env,
      agent: {agent: flags.agent, claude: flags.claude, codex: flags.codex, model: flags.model, effort: flags.effort, timeout: flags.timeout},
      reviewAgent: flags['review-agent'],
      summary: flags.summary,
      quiet: flags.quiet || flags.summary,
      options: {
        maxCycles: 0,
        summary: flags.summary,
        reviewEvery: 0,
        reviewThreshold: flags['review-threshold'],
        autoReview: flags['auto-review'],
        autoAlign: false,
        dryRun: flags['dry-run'],
        once: args.selector ? {selector: args.selector} : {},
        commandName: 'helix build',
      },
    })
    if (code !== EXIT.OK) this.exit(code)
  }
}
