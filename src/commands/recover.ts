import * as Args from '@oclif/core/args'
import * as Flags from '@oclif/core/flags'
import {HelixCommand} from '../cli/base-command.js'
import {HelixError, EXIT, unexpectedArgument} from '../util/errors.js'
import {projectPaths} from '../util/root.js'
import {recoverOrphans} from '../recovery/orphans.js'
import {realProbe} from '../proc/process-probe.js'
import {orphanThresholdSec} from '../tracker/liveness.js'
import {recoverWorktrees} from '../recovery/worktrees.js'
import {sanitize} from '../util/sanitize.js'

export default class Recover extends HelixCommand {
  static override args = {
    id: Args.string({
      description:
        "release this one bead's claim when its claimer is not live by pid evidence (dead or reused pid, no process of its dispatch), whatever its age; an id that begins with '-' goes after '--' (default: every orphaned claim)",
      required: false,
    }),
  }

  // a second word is refused by run() in the house format (`helix recover: unexpected argument '…'`)
  static override strict = false

  static override description = "Reclaim orphaned in_progress beads (helix's own stale claims) now, or release one named bead"

  static override examples = ['<%= config.bin %> recover', '<%= config.bin %> recover --dry-run', '<%= config.bin %> recover hx-1a2b', '<%= config.bin %> recover -- -odd-id', '<%= config.bin %> recover --preserved --dry-run']

  static override flags = {
    'dry-run': Flags.boolean({description: 'list what would be reclaimed; change nothing', default: false}),
    preserved: Flags.boolean({description: 'prune refs/helix/preserved/* of beads that landed since (closed), now; never those of an open bead', default: false}),
    worktrees: Flags.boolean({description: 'only reconcile stale .helix/worktrees/* of --workers runs (work kept on refs/helix/preserved/*, never removed); plain recover does this after the claims', default: false}),
  }

  async run(): Promise<void> {
    const {args, flags, argv} = await this.parse(Recover)
    if (argv.length > 1) throw unexpectedArgument(this.id, argv.slice(1).map(String))
    const env = process.env
    if (args.id !== undefined && flags.worktrees) throw new HelixError('--worktrees takes no bead id', EXIT.ERROR)
    if (args.id !== undefined) {
      if (args.id.trim() === '') throw new HelixError('empty bead id', EXIT.ERROR)
      const {releaseClaim} = await import('../recovery/release.js')
      await releaseClaim(projectPaths(process.cwd(), env), args.id, {
        owner: env.HELIX_OWNER?.trim() || 'helix',
        probe: realProbe(),
        dryRun: flags['dry-run'],
        say: (line) => this.out(sanitize(line)),
      })
      return
    }
    if (flags.preserved) {
      if (args.id !== undefined || flags.worktrees) throw new HelixError('--preserved takes no bead id and no --worktrees', EXIT.ERROR)
      const {prunePreserved} = await import('../recovery/reconcile-checks.js')
      await prunePreserved(projectPaths(process.cwd(), env), {env, keepDays: 0, all: true, dryRun: flags['dry-run'], say: (line) => this.out(sanitize(line))})
      return
    }
    if (flags.worktrees) {
      await recoverWorktrees(projectPaths(process.cwd(), env), {env, dryRun: flags['dry-run'], say: (line) => this.out(sanitize(line))})
      return
    }
    const res = await recoverOrphans(projectPaths(process.cwd(), env), {
      owner: env.HELIX_OWNER?.trim() || 'helix',
      probe: realProbe(),
      thresholdSec: orphanThresholdSec(env),
      dryRun: flags['dry-run'],
      say: (line) => this.out(sanitize(line)),
    })
    if (res.recovered.length === 0) this.out('helix: no orphaned claims to recover')
    // SPEC 18.2: `helix recover` also reconciles what dead --workers runs left: their
    // work is kept on a preserved ref and a bead they had closed is reopened NOT LANDED
    // (finishing such an attempt, gate, review and landing, needs the agents: `helix run`
    // does that at its start)
    await recoverWorktrees(projectPaths(process.cwd(), env), {env, dryRun: flags['dry-run'], say: (line) => this.out(sanitize(line)), quietWhenNone: true})
  }
}
