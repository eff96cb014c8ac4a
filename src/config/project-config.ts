/**
 * The project configuration file: `<root>/.helix/config.json`, one JSON
 * object whose keys are `helix run`'s flag names (`agent`, `review-agent`, `workers`,
 * `timeout`, `notify`, …). Precedence, highest first: a flag, then the HELIX_* variable,
 * then this file, then the built-in default (docs/decisions.md).
 *
 * Keys with a HELIX_* variable are applied by filling that variable when it is unset
 * (`configuredEnv`), so every command that already reads the environment (run, start,
 * doctor, status, the one-shot actions) honours the file the same way. The others
 * (`review-every`, `max-cycles`, `auto-review` …) are read by `helix run` as flag defaults.
 *
 * Invalid file = one line naming the file and the key, exit 1 (HelixError).
 */
import {mkdirSync, renameSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {HelixError, EXIT, errorMessage} from '../util/errors.js'
import {findDdxRoot} from '../util/root.js'
import {readConfigText} from './config-file.js'

export const CONFIG_PATH = path.join('.helix', 'config.json')

type KeyType = 'string' | 'int' | 'number' | 'bool' | 'list'

interface KeySpec {
  type: KeyType
  /** the HELIX_* variable this key stands in for */
  env?: string
  /** a short description (docs and `--save-config`'s line) */
  what: string
  /** the smallest and largest number allowed (int and number keys) */
  min?: number
  max?: number
  /** the only values allowed (string keys) */
  oneOf?: readonly string[]
}

export const CONFIG_KEYS: Record<string, KeySpec> = {
  agent: {type: 'string', env: 'HELIX_AGENT', what: 'implementation agent: codex, claude, or a path (./agent.sh)'},
  'review-agent': {type: 'string', env: 'HELIX_REVIEW_AGENT', what: 'review agent'},
  model: {type: 'string', env: 'HELIX_MODEL', what: 'model passed to the agent'},
  effort: {type: 'string', env: 'HELIX_EFFORT', what: 'reasoning effort passed to the agent'},
  timeout: {type: 'number', env: 'HELIX_AGENT_TIMEOUT', what: 'seconds per agent call'},
  workers: {type: 'int', env: 'HELIX_WORKERS', what: 'parallel attempts (1 to 32)', min: 1, max: 32},
  land: {type: 'string', env: 'HELIX_LAND', what: "'ff' or 'none' with workers > 1; 'pr' with --remote (SPEC 20.5)", oneOf: ['ff', 'none', 'pr']},
  'pr-auto-merge': {type: 'string', env: 'HELIX_PR_AUTO_MERGE', what: "with land 'pr': squash, merge or rebase once checks pass"},
  'pr-wait': {type: 'int', env: 'HELIX_PR_WAIT', what: "with land 'pr': seconds to keep polling open pull requests when nothing else is selectable"},
  'pr-poll': {type: 'int', env: 'HELIX_PR_POLL', what: "with land 'pr': seconds between looks at each pull request"},
  'pr-command': {type: 'string', env: 'HELIX_PR_COMMAND', what: "with land 'pr': another forge's adapter instead of gh"},
  'stall-timeout': {type: 'number', env: 'HELIX_STALL_TIMEOUT', what: 'kill an agent silent this long (seconds)'},
  'land-check': {type: 'string', env: 'HELIX_LAND_CHECK', what: "the team's check on every candidate before it lands"},
  'land-check-timeout': {type: 'int', env: 'HELIX_LAND_CHECK_TIMEOUT', what: 'seconds the land check may run'},
  'resolve-attempts': {type: 'int', env: 'HELIX_RESOLVE_ATTEMPTS', what: 'failed resolve rounds per landing (0 disables)'},
  // SPEC 20.3/20.4 name these two keys in camelCase; both spellings are read
  landCheck: {type: 'string', env: 'HELIX_LAND_CHECK', what: "alias of 'land-check'"},
  resolveAttempts: {type: 'int', env: 'HELIX_RESOLVE_ATTEMPTS', what: "alias of 'resolve-attempts'"},
  'max-tokens': {type: 'int', env: 'HELIX_MAX_TOKENS', what: "the run's token budget", min: 1},
  'max-cost': {type: 'number', env: 'HELIX_MAX_COST', what: "the run's cost budget in USD"},
  'max-bead-tokens': {type: 'int', env: 'HELIX_MAX_BEAD_TOKENS', what: 'per-bead token cap', min: 1},
  'max-bead-cost': {type: 'number', env: 'HELIX_MAX_BEAD_COST', what: 'per-bead cost cap in USD'},
  'max-quota-wait': {type: 'number', env: 'HELIX_MAX_QUOTA_WAIT', what: 'longest quota pause (seconds)'},
  notify: {type: 'string', env: 'HELIX_NOTIFY', what: 'notifier command'},
  'auto-align': {type: 'bool', env: 'HELIX_AUTO_ALIGN', what: 'alignment on ALIGN/STOP'},
  'auto-review': {type: 'bool', what: 'post-implementation review'},
  'review-every': {type: 'int', what: 'periodic alignment every N completed cycles'},
  'review-threshold': {type: 'int', what: 'review when a cycle changed at least N lines'},
  'max-cycles': {type: 'int', what: 'stop after N completed cycles'},
  sandbox: {type: 'bool', env: 'HELIX_SANDBOX', what: 'run every agent call in a bubblewrap sandbox (SPEC 21)'},
  'sandbox-network': {type: 'string', env: 'HELIX_SANDBOX_NETWORK', what: "'on' or 'none' (none unshares the network)", oneOf: ['on', 'none']},
  sandboxWritable: {type: 'list', what: 'extra paths the sandboxed agent may write (~/ is the home)'},
  sandboxReadable: {type: 'list', what: 'extra paths the sandboxed agent may read under home or /tmp'},
  sandboxHidden: {type: 'list', what: 'paths hidden from the sandboxed agent'},
  sandboxEnv: {type: 'list', what: 'extra environment variables kept in the sandbox (NAME or PREFIX_*)'},
}

export type ConfigValue = string | number | boolean | string[]
export type ProjectConfig = Record<string, ConfigValue>

function bad(file: string, msg: string): HelixError {
  return new HelixError(`${file}: ${msg}`, EXIT.ERROR)
}

function checkValue(file: string, key: string, spec: KeySpec, v: unknown): ConfigValue {
  const ok =
    spec.type === 'list'
      ? Array.isArray(v) && v.every((x) => typeof x === 'string' && x.trim() !== '')
      : spec.type === 'string'
      ? typeof v === 'string' && v.trim() !== ''
      : spec.type === 'bool'
        ? typeof v === 'boolean'
        : typeof v === 'number' && Number.isFinite(v) && v >= 0 && (spec.type === 'number' || Number.isInteger(v))
  if (!ok) {
    const want = {list: 'a list of non-empty strings', string: 'a non-empty string', int: 'a whole number ≥ 0', number: 'a number ≥ 0', bool: 'true or false'}[spec.type]
    throw bad(file, `key '${key}' must be ${want} (got ${JSON.stringify(v) ?? String(v)})`)
  }
  // the same ranges `run` checks its flags against, named here so the file (not HELIX_*) is blamed
  if (typeof v === 'number' && ((spec.min !== undefined && v < spec.min) || (spec.max !== undefined && v > spec.max))) {
    const range = spec.max !== undefined ? `from ${spec.min ?? 0} to ${spec.max}` : `≥ ${spec.min}`
    throw bad(file, `key '${key}' must be ${spec.type === 'int' ? 'a whole number' : 'a number'} ${range} (got ${v})`)
  }
  if (typeof v === 'string' && spec.oneOf && !spec.oneOf.includes(v)) throw bad(file, `key '${key}' must be ${orList(spec.oneOf.map((o) => `'${o}'`))} (got ${JSON.stringify(v)})`)
  return v as ConfigValue
}

/** Parse and validate config text; `file` names it in errors. */
export function parseConfig(text: string, file: string): ProjectConfig {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw bad(file, `not valid JSON (${errorMessage(error).split('\n')[0]})`)
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw bad(file, 'must hold one JSON object')
  const out: ProjectConfig = {}
  for (const [key, v] of Object.entries(raw as Record<string, unknown>)) {
    const spec = CONFIG_KEYS[key]
    if (!spec) throw bad(file, `unknown key '${key}' (known: ${Object.keys(CONFIG_KEYS).join(', ')})`)
    out[key] = checkValue(file, key, spec, v)
  }
  return out
}

/** `<root>/.helix/config.json` of the project around `cwd`, or null outside a project. */
export function configFile(cwd: string): string | null {
  const root = findDdxRoot(cwd)
  return root ? path.join(root, CONFIG_PATH) : null
}

/** The project's config ({} when there is no file or no project). Invalid → HelixError. */
export function loadConfig(cwd: string): ProjectConfig {
  const file = configFile(cwd)
  if (!file) return {}
  const text = readConfigText(file)
  return text === null ? {} : parseConfig(text, file)
}

/**
 * The environment with the config's values filled in where the variable is unset
 * (flags > env > config). A relative agent path is resolved against the project root,
 * so `./agent.sh` in the file means the project's script from any subdirectory.
 */
export function configuredEnv(env: NodeJS.ProcessEnv, cwd: string): NodeJS.ProcessEnv {
  const config = loadConfig(cwd)
  const root = findDdxRoot(cwd)
  const out: NodeJS.ProcessEnv = {...env}
  for (const [key, value] of Object.entries(config)) {
    const name = CONFIG_KEYS[key]?.env
    if (!name || (out[name] !== undefined && out[name] !== '')) continue
    if (Array.isArray(value)) continue
    let v = typeof value === 'boolean' ? (value ? '1' : '0') : String(value)
    if ((key === 'agent' || key === 'review-agent') && v.includes('/') && root) v = path.resolve(root, v)
    out[name] = v
  }
  return out
}

/** Merge `values` into the project's config file (atomically); returns the file written. */
export function saveConfig(cwd: string, values: ProjectConfig): string {
  const file = configFile(cwd)
  if (!file) throw new HelixError("not a helix project (no .ddx/ here or above); run 'helix tracker init' at the project root", EXIT.ERROR)
  const current = loadConfig(cwd)
  const next = {...current}
  for (const [k, v] of Object.entries(values)) next[k] = checkValue(file, k, CONFIG_KEYS[k] ?? {type: 'string', what: ''}, v)
  mkdirSync(path.dirname(file), {recursive: true})
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify(next, null, 2) + '\n')
  renameSync(tmp, file)
  return file
}

/** `run`'s parsed flags → the config values `--save-config` keeps (only keys the file knows; numbers as numbers). */
export function configFromFlags(flags: Record<string, unknown>): ProjectConfig {
  const out: ProjectConfig = {}
  for (const [key, v] of Object.entries(flags)) {
    const spec = CONFIG_KEYS[key]
    if (!spec || v === undefined) continue
    if (spec.type === 'int' || spec.type === 'number') {
      const n = typeof v === 'number' ? v : Number(String(v).trim())
      if (Number.isFinite(n)) out[key] = n
    } else if (spec.type === 'list') {
      if (Array.isArray(v)) out[key] = v.map(String)
    } else out[key] = spec.type === 'bool' ? Boolean(v) : String(v)
  }
  return out
}

/**
 * A missing agent that the project's config named: the error says so, since the
 * operator typed no agent and would otherwise look for it in flags and HELIX_* variables.
 * `typed` says which of the two the command line gave; `rawEnv` is the environment before
 * the config filled it. Any other error is returned as it is.
 */
export function blameConfigFile(error: unknown, cwd: string, rawEnv: NodeJS.ProcessEnv, typed: {agent: boolean; reviewAgent: boolean}): unknown {
  if (!(error instanceof HelixError) || !/^agent '.*' not found/.test(error.message)) return error
  let config: ProjectConfig
  try {
    config = loadConfig(cwd)
  } catch {
    // a bad file was reported before any agent was looked for; keep the original error
    return error
  }
  const root = findDdxRoot(cwd) ?? cwd
  const named = (key: 'agent' | 'review-agent', envName: string, flag: boolean): boolean => {
    const v = config[key]
    if (flag || typeof v !== 'string' || (rawEnv[envName] ?? '').trim() !== '') return false
    return error.message.startsWith(`agent '${v}'`) || error.message.startsWith(`agent '${path.resolve(root, v)}'`)
  }
  const key = named('agent', 'HELIX_AGENT', typed.agent) ? 'agent' : named('review-agent', 'HELIX_REVIEW_AGENT', typed.reviewAgent) ? 'review-agent' : null
  return key ? new HelixError(`${error.message} (set by '${key}' in ${CONFIG_PATH}; edit it or pass --${key})`, error.exitCode) : error
}

/** `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'` */
function orList(items: string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`
}
