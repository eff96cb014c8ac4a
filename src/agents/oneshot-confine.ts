/**
 * The one-shot agent commands (`helix check`, `align`, `backfill`, `design`,
 * `polish`, `review`) in a project whose config says `sandbox: true` (or with
 * HELIX_SANDBOX=1): the agent runs confined. A one-shot has no attempt to land,
 * it works in the operator's checkout, which the operator then reviews: so
 * `check` and `review` get nothing writable but a private /tmp, and the writing
 * ones get the project root writable with its `.git` read-only (no ref, hook or
 * config of the repository can change; the agent's edits stay uncommitted for the
 * operator). docs/decisions.md says why (sandbox, wave 2).
 */
import {existsSync} from 'node:fs'
import path from 'node:path'
import {executableDirs, probeSandbox, sandboxArgv, sandboxEnv} from '../proc/sandbox.js'
import {helixReadable, sandboxSpecOf} from './confine.js'
import type {Confine} from './types.js'
import {loadConfig} from '../config/project-config.js'
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

const READ_ONLY = new Set(['check', 'review'])

/** null when the project is not sandboxed; throws the one-line refusal where bwrap cannot work */
export function oneShotConfine(action: string, root: string, env: NodeJS.ProcessEnv): Confine | null {
  const config = loadConfig(root)
  const fromEnv = env.HELIX_SANDBOX?.trim().toLowerCase()
  const on = fromEnv !== undefined && fromEnv !== '' ? !['0', 'false', 'no', 'off'].includes(fromEnv) : config.sandbox === true
  if (!on) return null
  const net = (env.HELIX_SANDBOX_NETWORK?.trim() || (typeof config['sandbox-network'] === 'string' ? config['sandbox-network'] : 'on')).trim()
  if (net !== 'on' && net !== 'none') throw new HelixError(`invalid sandbox-network '${sanitize(net).slice(0, 40)}': expected 'on' or 'none'`, EXIT.ERROR)
  const spec = sandboxSpecOf(config, net)
  const p = probeSandbox(spec, env)
  if (!p.ok) throw new HelixError(`helix: ${p.message}`, EXIT.ERROR)
  const readOnly = READ_ONLY.has(action)
  const gitDir = path.join(root, '.git')
  return (argv, agentEnv, cwd) => ({
    argv: sandboxArgv(spec, argv, {
      cwd,
      rw: readOnly ? [] : [root],
      ro: [root, ...helixReadable(), ...executableDirs(argv[0])],
      roOver: !readOnly && existsSync(gitDir) ? [gitDir] : [],
      env: agentEnv,
    }),
    env: sandboxEnv(spec, agentEnv),
  })
}
