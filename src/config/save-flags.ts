/**
 * `helix run --save-config`: the flags given on this command line, written into the
 * project's `.helix/config.json` (merged with what is there). Only flags the operator
 * typed are saved (oclif fills no defaults for the config-backed flags), so a saved
 * file never pins a default. An agent path is stored relative to the project root.
 */
import path from 'node:path'
import {HelixError, EXIT} from '../util/errors.js'
import {findDdxRoot, NOT_A_PROJECT} from '../util/root.js'
import {sanitize} from '../util/sanitize.js'
import {CONFIG_PATH, configFromFlags, saveConfig} from './project-config.js'

function rootRelative(root: string, cwd: string, p: string): string {
  if (!p.includes('/')) return p
  const rel = path.relative(root, path.resolve(cwd, p))
  return rel.startsWith('..') || path.isAbsolute(rel) ? path.resolve(cwd, p) : `./${rel}`
}

/**
 * Save and return the line to print: `helix: saved agent, workers to .helix/config.json`.
 * With `--dry-run` nothing is written: `helix: would save agent, workers to … (dry run: not written)`.
 */
export function saveRunFlags(cwd: string, flags: Record<string, unknown>): string {
  const root = findDdxRoot(cwd)
  if (!root) throw new HelixError(NOT_A_PROJECT, EXIT.ERROR)
  const dryRun = flags['dry-run'] === true
  const given: Record<string, unknown> = {...flags}
  if (flags.claude) given.agent = 'claude'
  if (flags.codex) given.agent = 'codex'
  for (const k of ['agent', 'review-agent', 'notify']) {
    if (typeof given[k] === 'string' && k !== 'notify') given[k] = rootRelative(root, cwd, given[k] as string)
  }
  const values = configFromFlags(given)
  const keys = Object.keys(values)
  if (keys.length === 0) return `helix: --save-config: no settings given to save (${CONFIG_PATH} unchanged)`
  if (dryRun) return `helix: would save ${keys.map((k) => sanitize(k)).join(', ')} to ${CONFIG_PATH} (dry run: not written)`
  saveConfig(cwd, values)
  return `helix: saved ${keys.map((k) => sanitize(k)).join(', ')} to ${CONFIG_PATH}`
}
