import {HelixCommand} from '../../util/base-command.js'
import {projectPaths} from '../../util/root.js'
import {initTracker} from '../../tracker/admin.js'

export default class TrackerInit extends HelixCommand {
  static override description = 'Create .ddx/beads.jsonl (empty) and .ddx/config.yaml if missing'

  async run(): Promise<void> {
    await this.parse(TrackerInit)
    const r = await initTracker(projectPaths(process.cwd(), process.env), process.env)
    for (const f of r.created) this.out(`created ${f}`)
    if (r.created.length === 0) this.out(`already initialized (${r.file})`)
  }
}
