/**
 * `helix` on the agent's PATH: a wrapper script that runs THIS helix (same
 * node, same package), so the prompts' `helix tracker …` commands reach the
 * version that holds the claim.
 */
import {createHash} from 'node:crypto'
import {chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {helixCliPath} from '../util/install.js'


let shimDirCache: string | null | undefined

/**
 * A directory holding a `helix` wrapper that runs THIS helix (same node, same
 * package), so the prompts' `helix tracker …` commands work for the agent even
 * when helix was started as `node bin/run.js` or via npx, and always talk to the
 * same version that holds the claim. Created once per package path under the
 * temp dir; null when it cannot be created (the agent then gets PATH unchanged).
 */
export function helixShimDir(): string | null {
  if (shimDirCache !== undefined) return shimDirCache
  try {
    const cli = helixCliPath()
    if (!existsSync(cli)) return (shimDirCache = null)
    const quote = (v: string) => `'${v.replace(/'/g, `'\\''`)}'`
    const body = `#!/bin/sh\nexec ${quote(process.execPath)} ${quote(cli)} "$@"\n`
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0
    const dir = path.join(os.tmpdir(), `helix-shim-${uid}-${createHash('sha256').update(body).digest('hex').slice(0, 12)}`)
    const file = path.join(dir, 'helix')
    let current = ''
    try {
      current = readFileSync(file, 'utf8')
    } catch {
      /* not there yet */
    }
    mkdirSync(dir, {recursive: true, mode: 0o755})
    // shared temp dir: use it only if it is ours and nobody else can write into it
    const st = lstatSync(dir)
    if (!st.isDirectory() || (typeof process.getuid === 'function' && st.uid !== uid) || (st.mode & 0o022) !== 0) return (shimDirCache = null)
    if (current !== body) {
      const tmp = `${file}.${process.pid}.tmp`
      writeFileSync(tmp, body, {mode: 0o755})
      chmodSync(tmp, 0o755)
      renameSync(tmp, file)
    }
    return (shimDirCache = dir)
  } catch {
    // no usable shim dir (tmp unwritable, not ours): the agent gets PATH unchanged, as documented above
    return (shimDirCache = null)
  }
}
