/**
 * SPEC 21.1 with `--sandbox`: drain actions that write (alignment, plan, polish,
 * backfill) run in a private clone of their own and land like an attempt; `check`
 * runs with nothing writable but a private /tmp.
 *
 * A writing action borrows the attempt machinery under a name of its own
 * (`helix-<action>`, so `helix/helix-alignment-<n>` and its worktree): the sandboxed
 * landing's `prepare` makes helix's worktree, the clone and the tracker copy; the
 * agent runs confined in the clone with `DDX_BEAD_DIR` on the copy; its tracker
 * changes come back under the lock (new beads, and field edits of existing beads
 * where nobody changed that field meanwhile); its commits are fetched back through
 * the confined upload-pack and land by fast-forward, as an attempt's would. Work that
 * cannot land is preserved (`refs/helix/preserved/helix-<action>/<n>`) and said so;
 * the action's own verdict is the agent's, as before.
 */
import type {DispatchArgs, LoopDeps, LoopLanding} from '../loop/ports.js'
import type {DispatchResult} from '../agents/types.js'
import {sanitize} from '../util/sanitize.js'
import {errorMessage} from '../util/errors.js'
import type {SandboxAttempts} from '../landing/sandbox-attempts.js'

export const WRITING_ACTIONS: ReadonlySet<string> = new Set(['alignment', 'plan', 'polish', 'backfill'])

/** the attempt-like name of a drain action's clone and branch */
export const actionBead = (action: string): string => `helix-${action}`

type Dispatch = (a: DispatchArgs) => Promise<DispatchResult>

/**
 * Runs one writing drain action in a clone of its own: prepare, dispatch confined,
 * take the tracker copy back, land (or preserve when the call was stopped).
 */
export async function dispatchInClone(a: DispatchArgs, o: {dispatch: Dispatch; landing: LoopLanding; attempts: SandboxAttempts; deps: LoopDeps}): Promise<DispatchResult> {
  const {landing, attempts, deps} = o
  const bead = actionBead(a.action)
  const ws = await landing.prepare(bead, 1, a.slot ?? 1)
  const at = attempts.get(ws.bead, ws.attempt)
  if (!at) {
    await landing.preserve(ws, 'the sandbox could not be made')
    throw new Error(`the sandbox of the ${a.action} action was not registered`)
  }
  attempts.asAction(ws.bead, ws.attempt)
  let res: DispatchResult
  try {
    res = await o.dispatch({...a, cwd: ws.dir, env: {...(a.env ?? {}), DDX_BEAD_DIR: at.trackerDir}, confine: attempts.confine})
  } catch (error) {
    await landing.preserve(ws, `the ${a.action} action failed: ${sanitize(errorMessage(error))}`)
    throw error
  }
  try {
    await attempts.takeBack(at)
  } catch (error) {
    deps.out.normal(`helix: the ${a.action} action's tracker changes could not be taken back: ${sanitize(errorMessage(error))}`)
  }
  if (a.signal?.aborted) {
    const ref = await landing.preserve(ws, 'interrupted')
    if (ref) deps.out.normal(`helix: the ${a.action} action was interrupted; its work is kept at ${sanitize(ref)}`)
    return res
  }
  const r = await landing.land(ws)
  if (r.landed) {
    if (r.commits.length > 0) deps.out.normal(`helix: the ${a.action} action's ${r.commits.length} commit(s) landed on the base`)
  } else {
    deps.out.both(`helix: the ${a.action} action's work did not land: ${sanitize(r.reason)}${r.preservedRef ? `; kept at ${sanitize(r.preservedRef)}` : ''}`)
  }
  return res
}
