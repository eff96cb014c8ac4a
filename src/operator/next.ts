/**
 * `helix next`: the bead `helix run` would select now (SPEC 5.3 tiers, via the
 * run loop's own selection code), or `no ready issues`. While a run is active
 * its skip list, backoff times and focused epic are honoured, so the answer is
 * what that run would pick next; without an active run a fresh run's view is used.
 */
import {projectPaths} from '../util/root.js'
import {sanitize} from '../util/sanitize.js'
import {readPidFile, runHolderAlive} from '../state/pidfile.js'
import {readRunState} from '../state/run-state.js'
import {readTracker} from '../tracker/store.js'
import {orphanThresholdSec, staleClaimIds} from '../tracker/liveness.js'
import {realProbe} from '../proc/process-probe.js'
import {nextSelectable, type SelectOptions} from '../loop/selection.js'

export const NO_READY = 'no ready issues'

/** Text: `<id>  <title>` (sanitized), or `no ready issues`. JSON: `{"id", "title"}` or `null`, unaltered data. */
export async function nextOutput(opts: {cwd?: string; env?: NodeJS.ProcessEnv; now?: Date; json?: boolean} = {}): Promise<string> {
  const env = opts.env ?? process.env
  const now = opts.now ?? new Date()
  const paths = projectPaths(opts.cwd ?? process.cwd(), env)
  const snap = await readTracker(paths.file)
  const staleClaims = await staleClaimIds(snap, realProbe(), now, orphanThresholdSec(env))
  const sel: SelectOptions = {now, staleClaims}
  const holder = readPidFile(paths.pidFile)
  if (holder && runHolderAlive(holder)) {
    const rs = await readRunState(paths.runState)
    if (rs && rs.pid === holder.pid) {
      sel.skip = new Set((rs.skipped ?? []).map((s) => s.id))
      sel.backoffUntil = rs.backoff_until ?? {}
      sel.focusedEpic = rs.focused_epic
      // the bead the run is working on is not "next"
      if (rs.current_bead) sel.exclude = new Set([rs.current_bead])
    }
  }
  const bead = nextSelectable(snap, sel)
  const title = bead && typeof bead.title === 'string' ? bead.title : ''
  if (opts.json) return JSON.stringify(bead ? {id: bead.id, title} : null) + '\n'
  // the id alone said little; the title follows, two spaces apart (`cut -d' ' -f1` still gives the id)
  return (bead ? `${sanitize(bead.id)}${title ? `  ${sanitize(title)}` : ''}` : NO_READY) + '\n'
}
