/**
 * `helix unblock <id>` (SPEC 16.2): removes the `blocked` label and turns a bead
 * whose status is `blocked` into `open`, so run, next and `tracker ready` see it again.
 */
import {projectPaths} from '../util/root.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {readTracker} from '../tracker/store.js'
import {updateBead} from '../tracker/ops.js'
import {labelledBlocked, statusOf} from '../tracker/queries.js'

export async function unblockBead(id: string, opts: {cwd?: string; env?: NodeJS.ProcessEnv} = {}): Promise<string> {
  const paths = projectPaths(opts.cwd ?? process.cwd(), opts.env ?? process.env)
  const snap = await readTracker(paths.file)
  const b = snap.byId.get(id)
  if (!b) throw new HelixError(`unknown bead '${sanitize(id)}'`, EXIT.ERROR)
  const label = labelledBlocked(b)
  const status = statusOf(b) === 'blocked'
  if (!label && !status) return `${sanitize(id)} is not blocked; nothing changed`
  await updateBead(paths, id, {...(label ? {removeLabels: ['blocked']} : {}), ...(status ? {status: 'open'} : {})})
  const what = [label ? "removed label 'blocked'" : null, status ? 'status blocked → open' : null].filter(Boolean).join(', ')
  return `unblocked ${sanitize(id)} (${what})`
}
