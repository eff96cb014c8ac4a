/**
 * The `confine` of an agent call outside an attempt (SPEC 21): the review
 * preflight's throw-away project is its only writable directory; helix itself,
 * its `helix` shim and node are bound back read-only when they live under /tmp
 * or home. Used by `helix run --sandbox` and by `doctor` in a sandboxed project.
 */
import {confineAt, executableDirs, type SandboxSpec} from '../proc/sandbox.js'
import {installRoot} from '../util/install.js'
import {helixShimDir} from './shim.js'
import type {Confine} from './types.js'

/** paths every confined helix call needs readable: helix's package, its shim, node */
export function helixReadable(): string[] {
  const shim = helixShimDir()
  return [installRoot(), ...executableDirs(process.execPath), ...(shim ? [shim] : [])]
}

export function preflightConfine(spec: SandboxSpec): Confine {
  return confineAt(spec, helixReadable())
}
