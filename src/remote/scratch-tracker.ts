/**
 * A tracker text edited as a project of its own: the text written to a scratch
 * `.ddx/beads.jsonl` (inside `.git/`), `edit` run on that project with the tracker's
 * own operations, the result read back, the scratch removed. The remote base's
 * tracker commits, the `--land pr` state overlay and the landings' tracker merge
 * all edit the queue this way, never through a checkout.
 */
import {mkdtemp, readFile, rm, writeFile, mkdir} from 'node:fs/promises'
import path from 'node:path'
import type {ProjectPaths} from '../util/root.js'

export async function editTrackerText(scratch: string, name: string, text: string, edit: (paths: ProjectPaths) => Promise<void>): Promise<string> {
  await mkdir(scratch, {recursive: true})
  const dir = await mkdtemp(path.join(scratch, `${name}-`))
  try {
    const ddx = path.join(dir, '.ddx')
    await mkdir(ddx)
    const file = path.join(ddx, 'beads.jsonl')
    await writeFile(file, text)
    await edit({root: dir, dir: ddx, file, lockDir: path.join(ddx, 'beads.lock'), pidFile: path.join(ddx, 'helix.pid'), runState: path.join(ddx, 'run-state.json'), logDir: path.join(dir, 'logs'), contextFile: path.join(dir, 'context.md')})
    return await readFile(file, 'utf8')
  } finally {
    await rm(dir, {recursive: true, force: true})
  }
}
