import {HelixCommand} from '../../cli/base-command.js'
import {initPaths} from '../../util/root.js'
import {initTracker} from '../../tracker/admin.js'
import {MERGE_DRIVER_COMMAND, registerMergeDriver} from '../../remote/merge-driver.js'
import {sanitize} from '../../util/sanitize.js'

export default class TrackerInit extends HelixCommand {
  static override description =
    'Create .ddx/ (beads.jsonl, config.yaml) at the git top level, or here without git, add helix runtime paths to .gitignore, and register the tracker merge driver; in an existing project adds only what is missing'

  async run(): Promise<void> {
    await this.parse(TrackerInit)
    const paths = initPaths(process.cwd(), process.env)
    const r = await initTracker(paths, process.env)
    for (const f of r.created) this.out(`created ${sanitize(f)}`)
    if (r.ignored.length > 0) this.out(`added to .gitignore: ${r.ignored.join(' ')}`)
    // SPEC 19.3: so two branches that both touched the tracker merge cleanly
    const m = await registerMergeDriver(paths.root, process.env)
    if (m.added.length > 0) {
      this.out(`registered the tracker merge driver: ${m.added.join(', ')} (runs '${MERGE_DRIVER_COMMAND}')`)
      if (!m.onPath) this.err("helix: note: 'helix' is not on PATH, so git cannot run the merge driver yet (a tracker merge would stop as a conflict)")
    }
    if (r.created.length === 0 && r.ignored.length === 0 && m.added.length === 0) this.out(`already initialized (${sanitize(r.file)})`)
  }
}
