import {accessSync, constants, statSync} from 'node:fs'

/** true when `p` is a regular file this process may execute (agents, hooks, acceptance scripts). */
export function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false
    accessSync(p, constants.X_OK)
    return true
  } catch {
    return false
  }
}
