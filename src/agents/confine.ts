/**
 * The `confine` of an agent call outside an attempt (SPEC 21): the review
 * preflight's throw-away project is its only writable directory; helix itself
 * and node are bound back read-only when they live under /tmp or home. The agent's
 * `helix` shim lives in the project it works on (`<root>/.helix/bin`, shim.ts), which
 * the sandbox binds anyway. Used by `helix run --sandbox` and by `doctor` in a sandboxed project.
 */
import {confineAt, executableDirs, DEFAULT_SANDBOX, type SandboxSpec} from '../proc/sandbox.js'
import type {ProjectConfig} from '../config/project-config.js'
import {installRoot} from '../util/install.js'
import type {Confine} from './types.js'

/** paths every confined helix call needs readable: helix's package and node (the shim is in the project) */
export function helixReadable(): string[] {
  return [installRoot(), ...executableDirs(process.execPath)]
}

export function preflightConfine(spec: SandboxSpec): Confine {
  return confineAt(spec, helixReadable())
}

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [])

/** the sandbox the project's config asks for: its four lists, and the network given */
export function sandboxSpecOf(config: ProjectConfig, network: 'on' | 'none'): SandboxSpec {
  return {...DEFAULT_SANDBOX, network, writable: list(config.sandboxWritable), readable: list(config.sandboxReadable), hidden: list(config.sandboxHidden), env: list(config.sandboxEnv)}
}
