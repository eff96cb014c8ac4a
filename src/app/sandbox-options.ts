/**
 * Whether `helix run` is sandboxed (SPEC 21), apart from the sandbox's wiring: every
 * run asks, and only a sandboxed one loads app/sandbox-wiring.ts and the landing,
 * clone and bubblewrap modules behind it.
 */
import {sandboxSpecOf} from '../agents/confine.js'
import type {ProjectConfig} from '../config/project-config.js'
import type {SandboxSpec} from '../proc/sandbox.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

/**
 * The sandbox options from `--sandbox` / `--sandbox-network`, HELIX_SANDBOX /
 * HELIX_SANDBOX_NETWORK (the config's `sandbox` and `sandbox-network` fill those)
 * and the config's lists. Null when the run is not sandboxed. Bad input throws.
 */
export function sandboxOptions(flags: {sandbox?: boolean; 'sandbox-network'?: string}, env: NodeJS.ProcessEnv, config: ProjectConfig): SandboxSpec | null {
  const fromEnv = env.HELIX_SANDBOX?.trim().toLowerCase()
  const on = flags.sandbox ?? (fromEnv !== undefined && fromEnv !== '' ? !['0', 'false', 'no', 'off'].includes(fromEnv) : false)
  const netName = flags['sandbox-network'] !== undefined ? '--sandbox-network' : 'HELIX_SANDBOX_NETWORK'
  const net = (flags['sandbox-network'] ?? env.HELIX_SANDBOX_NETWORK ?? 'on').trim()
  if (net !== 'on' && net !== 'none') throw new HelixError(`invalid ${netName} '${sanitize(net).slice(0, 40)}': expected 'on' or 'none'`, EXIT.ERROR)
  if (!on) {
    if (flags['sandbox-network'] !== undefined) throw new HelixError('--sandbox-network needs --sandbox (or sandbox: true in .helix/config.json)', EXIT.ERROR)
    return null
  }
  return sandboxSpecOf(config, net)
}
