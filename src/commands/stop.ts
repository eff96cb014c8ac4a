import * as Args from '@oclif/core/args'
import {HelixCommand} from '../cli/base-command.js'
import {unexpectedArgument} from '../util/errors.js'
import {projectPaths} from '../util/root.js'
import {stopRun} from '../operator/control.js'
import {sanitize} from '../util/sanitize.js'

export default class Stop extends HelixCommand {
  // Declared (hidden) only so that a stray word reaches this command and is
  // refused in one line, instead of oclif looking for a command 'stop:<word>'.
  static override args = {unexpected: Args.string({hidden: true})}

  static override description = 'Stop the active run: SIGTERM, then SIGKILL after 15 s'

  async run(): Promise<void> {
    const {args} = await this.parse(Stop)
    if (args.unexpected !== undefined) throw unexpectedArgument(this.id, [args.unexpected])
    const {pid, killed, released} = await stopRun({paths: projectPaths(process.cwd(), process.env)})
    if (killed) this.err(`helix: pid ${pid} ignored SIGTERM for 15s; sent SIGKILL`)
    for (const id of released ?? []) this.err(`helix: unclaimed ${sanitize(id)} (its run was killed)`)
    this.out(`helix: stopped (pid=${pid})`)
  }
}
