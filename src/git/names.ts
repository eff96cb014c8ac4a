/**
 * Bead ids become git branch names, ref names and directory names (SPEC 15.1).
 * Ids are untrusted, so helix accepts only ids that are already safe in all three
 * places, and refuses every other id with a clear error instead of mapping it
 * (a mapping could make two ids share one branch). Real tracker ids
 * (`hx-1a2b3c4d`, `helix-0a1b2c3d`, `ddx-…`) all pass.
 */
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/

/** null when `id` can name a branch, a ref and a directory; else what is wrong with it. */
export function idProblem(id: string): string | null {
  if (!SAFE_ID.test(id)) return "allowed: letters, digits, '.', '_', '-'; first a letter or digit; at most 100 characters"
  if (id.includes('..')) return "no '..'"
  if (id.endsWith('.') || id.endsWith('.lock')) return "may not end in '.' or '.lock'"
  return null
}

export function assertSafeId(id: string): void {
  const problem = idProblem(id)
  if (problem)
    throw new HelixError(`helix: bead id '${sanitize(id)}' cannot name a git branch for --workers (${problem}); rename the bead or run with --workers 1`, EXIT.ERROR)
}

export function assertAttempt(attempt: number): void {
  if (!Number.isSafeInteger(attempt) || attempt < 1) throw new HelixError(`helix: attempt must be a positive integer (got ${sanitize(attempt)})`, EXIT.ERROR)
}

/** `helix/<id>-<attempt>` */
export const branchName = (id: string, attempt: number): string => `helix/${id}-${attempt}`
/** `refs/helix/preserved/<id>/<attempt>` */
export const preservedRefName = (id: string, attempt: number): string => `refs/helix/preserved/${id}/${attempt}`
/** `.helix/worktrees/<id>-<attempt>`, relative to the project root */
export const worktreeRel = (id: string, attempt: number): string => `.helix/worktrees/${id}-${attempt}`

/** A path (relative to the repository top) inside a `.ddx/` directory at any depth. */
export function touchesTracker(file: string): boolean {
  return file.split('/').includes('.ddx')
}
