/**
 * Where this helix is installed: the package directory that holds `bin/run.js`,
 * `workflows/` and `node_modules/`. The build bundles modules into files at several
 * depths under dist/ (dist/chunks/x.js, dist/commands/tracker/x.js), and tests run
 * them from src/, so it is found by walking up from this module's own file rather than
 * by counting `..`s.
 */
import {existsSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

let root: string | undefined

/** The package directory (holds bin/run.js and package.json). */
export function installRoot(): string {
  if (root) return root
  const start = path.dirname(fileURLToPath(import.meta.url))
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'bin', 'run.js')) && existsSync(path.join(dir, 'package.json'))) return (root = dir)
    if (path.dirname(dir) === dir) throw new Error(`helix: no bin/run.js above ${start}; the install is incomplete (reinstall helix)`)
  }
}

/** This package's CLI entry, `<package>/bin/run.js`. */
export function helixCliPath(): string {
  return path.join(installRoot(), 'bin', 'run.js')
}
