import {HelixCommand} from '../../util/base-command.js'
import {initPaths} from '../../util/root.js'
import {initTracker} from '../../tracker/admin.js'

export default class TrackerInit extends HelixCommand {
  static override description = 'Create .ddx/ (beads.jsonl, config.yaml) at the git top level, or here without git, and add helix runtime paths to .gitignore'

  async run(): Promise<void> {
    await this.parse(TrackerInit)
    const r = await initTracker(initPaths(process.cwd(), process.env), process.env)
    for (const f of r.created) this.out(`created ${f}`)
    if (r.ignored.length > 0) this.out(`added to .gitignore: ${r.ignored.join(' ')}`)
    if (r.created.length === 0) this.out(`already initialized (${r.file})`)
  }
}
