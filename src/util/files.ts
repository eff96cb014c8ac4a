import {accessSync, constants, statSync} from 'node:fs'

/** true when `p` is a regular file this process may execute (agents, hooks, acceptance scripts). */
export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false
    accessSync(p, constants.X_OK)
    return true
  } catch {
    // missing, not a file, or not executable by us: all mean "cannot run it"
    return false
  }
}

/**
 * true for "there is nothing there" (ENOENT, or a path component that is not a
 * directory). Catches that treat a missing file as an answer use this, so that
 * EACCES, EIO and the like surface instead of passing for "missing".
 */
export function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
