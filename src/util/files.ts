import {accessSync, constants, mkdirSync, statSync} from 'node:fs'
import {EXIT, HelixError, fsErrorWords} from './errors.js'
import {sanitize} from './sanitize.js'

/**
 * mkdir -p of a directory helix writes (.ddx/, .helix-logs/): a file in the way, or a
 * refusal, is one line that names the fix, not an internal error. `retry` is what to do
 * once the way is clear.
 */
export function makeDirSync(dir: string, retry = 'try again'): void {
  try {
    mkdirSync(dir, {recursive: true})
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      throw new HelixError(`cannot create ${sanitize(dir)}: a file is in the way (it must be a directory); move that file away, then ${retry}`, EXIT.ERROR)
    }
    throw new HelixError(`cannot create ${sanitize(dir)}: ${sanitize(fsErrorWords(error))}`, EXIT.ERROR)
  }
}

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
