import {HelixCommand} from '../util/base-command.js'
import {projectPaths} from '../util/root.js'
import {stopRun} from '../status/control.js'

export default class Stop extends HelixCommand {
  static override description = 'Stop the active run: SIGTERM, then SIGKILL after 15 s'

  async run(): Promise<void> {
    await this.parse(Stop)
    const {pid, killed, released} = await stopRun({paths: projectPaths(process.cwd(), process.env)})
    if (killed) this.err(`helix: pid ${pid} ignored SIGTERM for 15s; sent SIGKILL`)
    for (const id of released ?? []) this.err(`helix: unclaimed ${id} (its run was killed)`)
    this.out(`helix: stopped (pid=${pid})`)
  }
}
