/**
 * `tracker show <id>` and `tracker close <id>`: the output of the two commands an agent
 * runs on every bead, as text, so that the oclif command and the start-up fast path
 * (src/cli/fast-path.ts) print the same thing from one implementation.
 */
import {projectPaths} from '../util/root.js'
import {readTracker} from './store.js'
import {serializeBead} from './codec.js'
import {closeBead, notFound} from './ops.js'
import {sanitize} from '../util/sanitize.js'
import {showText} from './query-text.js'

/** What `helix tracker show <id> [--json]` prints. */
export async function trackerShowOutput(id: string, opts: {json?: boolean} = {}): Promise<string> {
  const snap = await readTracker(projectPaths().file)
  const b = snap.byId.get(id)
  if (!b) throw notFound(id)
  return opts.json ? serializeBead(b) + '\n' : showText(b, snap)
}

/** Close the bead (fenced by HELIX_CLAIM_TOKEN / HELIX_BEAD_ID) and say so, as `helix tracker close <id> [--json]` prints it. */
export async function trackerCloseOutput(id: string, opts: {json?: boolean} = {}): Promise<string> {
  const bead = await closeBead(projectPaths(), id, {claimToken: process.env.HELIX_CLAIM_TOKEN, targetId: process.env.HELIX_BEAD_ID})
  return (opts.json ? serializeBead(bead) : `closed ${sanitize(bead.id)}`) + '\n'
}
