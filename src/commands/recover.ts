import {Args, Flags} from '@oclif/core'
import {HelixCommand} from '../util/base-command.js'
import {HelixError, EXIT} from '../util/errors.js'
import {projectPaths} from '../util/root.js'
import {recoverOrphans} from '../recovery/orphans.js'
import {realProbe} from '../recovery/probe.js'
import {orphanThresholdSec} from '../tracker/liveness.js'
import {recoverWorktrees} from '../git/worktrees.js'
import {sanitize} from '../util/sanitize.js'

export default class Recover extends HelixCommand {
  // Declared (hidden) only so that a stray word reaches this command and is
  // refused in one line, instead of oclif looking for a command 'recover:<word>'.
  static override args = {unexpected: Args.string({hidden: true})}

  static override description = "Reclaim orphaned in_progress beads (helix's own stale claims) now"

  static override flags = {
    'dry-run': Flags.boolean({description: 'list what would be reclaimed; change nothing', default: false}),
    worktrees: Flags.boolean({description: 'remove stale .helix/worktrees/* of --workers runs (never refs/helix/preserved/*) instead', default: false}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Recover)
    if (args.unexpected !== undefined) throw new HelixError(`unexpected argument: ${args.unexpected}`, EXIT.ERROR)
    const env = process.env
    if (flags.worktrees) {
      await recoverWorktrees(projectPaths(process.cwd(), env), {env, dryRun: flags['dry-run'], say: (line) => this.out(line)})
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
  }
}
