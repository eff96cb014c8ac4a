/**
 * `helix` on the agent's PATH: a wrapper script that runs THIS helix (same
 * node, same package), so the prompts' `helix tracker …` commands reach the
 * version that holds the claim.
 */
import {chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {helixCliPath} from '../util/install.js'

/** per project root: the shim's directory, or null when it cannot be made */
const shimDirs = new Map<string, string | null>()

/** Where the shim lives: inside the project's runtime directory (ignored by git, SPEC 16.1). */
export function shimDirOf(root: string): string {
  return path.join(root, '.helix', 'bin')
}

/**
 * A directory holding a `helix` wrapper that runs THIS helix (same node, same
 * package), so the prompts' `helix tracker …` commands work for the agent even
 * when helix was started as `node bin/run.js` or via npx, and always talk to the
 * same version that holds the claim. It lives in the project (`<root>/.helix/bin`),
 * so it goes wherever the project goes and nothing is left in a shared temp dir;
 * rewritten (atomically) only when its text changes; null when it cannot be made
 * (the agent then gets PATH unchanged).
 */
export function helixShimDir(root: string): string | null {
  const known = shimDirs.get(root)
  // made before and still there (someone may have cleaned .helix/ meanwhile)
  if (known === null || (known !== undefined && existsSync(path.join(known, 'helix')))) return known
  let dir: string | null = null
  try {
    const cli = helixCliPath()
    lstatSync(cli)
    const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`
    const body = `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(cli)} "$@"\n`
    // the project must be there: the shim never creates it (a missing cwd stays a spawn failure)
    if (!statSync(root).isDirectory()) throw new Error('not a directory')
    const candidate = shimDirOf(root)
    const file = path.join(candidate, 'helix')
    let current = ''
    try {
      current = readFileSync(file, 'utf8')
    } catch {
      /* not there yet */
    }
    mkdirSync(candidate, {recursive: true, mode: 0o755})
    // a real directory, not a link to somewhere else
    if (lstatSync(candidate).isDirectory()) {
      if (current !== body) {
        const tmp = `${file}.${process.pid}.tmp`
        writeFileSync(tmp, body, {mode: 0o755})
        chmodSync(tmp, 0o755)
        renameSync(tmp, file)
      }
      dir = candidate
    }
  } catch {
    // no usable shim dir (no CLI file, a read-only project): the agent gets PATH unchanged, as documented above
    dir = null
  }
  shimDirs.set(root, dir)
  return dir
}
