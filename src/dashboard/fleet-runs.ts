/**
 * `helix dashboard --remote` (SPEC 22.1, 22.2): every host's run records, read with
 * the fleet (at most every 10 s, for every page together) so that the page's night is
 * the fleet's, as `helix report --remote` tells it. Reads only: no local ref is written.
 */
import {readRunRecords} from '../remote/run-records.js'
import {fleetHistory} from '../report/fleet.js'
import type {History} from '../report/summary.js'

/** The records and a key that changes when any host's ref moves; null when the remote did not answer. */
export async function fleetRunsOf(root: string, remote: string, env: NodeJS.ProcessEnv): Promise<{key: string; history: History} | null> {
  const recs = await readRunRecords({cwd: root, remote, env, scratch: ''})
  if (!recs) return null
  return {key: recs.map((r) => `${r.ref} ${r.sha}`).join('\n'), history: fleetHistory(recs).history}
}
