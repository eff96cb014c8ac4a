/**
 * Temp files of killed writers (SPEC 13.2): removed by the next tracker writer
 * once older than TEMP_MAX_AGE_MS (never younger: they may be a live writer's),
 * and by `tracker doctor --repair`. The one list of the temp files that live in
 * `.ddx/` and who writes them:
 *   `.beads.jsonl.tmp-*`      the tracker's durable write (util/atomic-write.ts)
 *   `helix.pid.*.tmp`         the run mutex (state/pidfile.ts)
 *   `.run-state.json.tmp-*`   run-state (state/run-state.ts)
 */
import path from 'node:path'
import {removeOldTempFiles, writeTarget} from '../util/atomic-write.js'
import type {ProjectPaths} from '../util/root.js'

export const TEMP_MAX_AGE_MS = 10 * 60_000
export const TEMP_FILE_PATTERN = /^(\.beads\.jsonl\.tmp-.+|helix\.pid\..+\.tmp|\.run-state\.json\.tmp-.+)$/

/** Remove temp files left by killed writers (> 10 min old) beside the tracker and its target, the pid file and run-state. */
export async function removeStaleTempFiles(paths: Pick<ProjectPaths, 'dir' | 'file'> & Partial<Pick<ProjectPaths, 'pidFile' | 'runState'>>, now: number = Date.now()): Promise<string[]> {
  const dirs = new Set([paths.dir])
  // the pid file and run-state live in `.ddx/` even when DDX_BEAD_DIR moves the tracker
  if (paths.pidFile) dirs.add(path.dirname(paths.pidFile))
  if (paths.runState) dirs.add(path.dirname(paths.runState))
  try {
    dirs.add(path.dirname(await writeTarget(paths.file)))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const removed: string[] = []
  for (const d of dirs) removed.push(...(await removeOldTempFiles(d, TEMP_FILE_PATTERN, TEMP_MAX_AGE_MS, now)))
  return removed
}
