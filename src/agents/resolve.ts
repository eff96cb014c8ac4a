/**
 * Finding agent binaries and the per-action defaults (SPEC 3).
 */
import path from 'node:path'
import {HelixError, EXIT} from '../util/errors.js'
import type {ActionName, AgentKind, AgentSpec} from './types.js'
import {isExecutableFile} from '../util/files.js'

/** The first executable named `name` on `env.PATH`, or undefined. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter(Boolean)
  for (const dir of dirs) {
    const candidate = path.join(dir, name)
    if (isExecutableFile(candidate)) return candidate
  }
  return undefined
}

function kindOf(name: string): AgentKind {
  const base = path.basename(name)
  return base === 'codex' || base === 'claude' ? base : 'command'
}

/** `--agent ''` is refused in the same words by every command that takes the agent flags */
export function refuseEmptyAgent(name: string | undefined): void {
  if (name !== undefined && name.trim() === '') throw new HelixError(`agent name is empty (use codex, claude, or a path to an executable)`, EXIT.ERROR)
}

/**
 * Resolve `--agent` / `HELIX_AGENT`: `codex`, `claude`, a bare command name (looked
 * up on PATH) or a path to an executable (relative paths resolve against `cwd`).
 * A path whose file name is `codex` or `claude` is driven like that agent.
 * Missing → HelixError exit 1 `agent '<name>' not found on PATH`.
 */
export function resolveAgent(name: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): AgentSpec {
  refuseEmptyAgent(name)
  const trimmed = name.trim()
  if (trimmed.includes('/')) {
    const abs = path.resolve(cwd, trimmed)
    if (!isExecutableFile(abs)) throw new HelixError(`agent '${trimmed}' not found or not executable`, EXIT.ERROR)
    return {kind: kindOf(abs), name: trimmed, path: abs}
  }
  const found = findOnPath(trimmed, env)
  if (!found) {
    // `--agent agent.sh` for a script in the project: PATH lookup misses it, so say how to name it
    const hint = isExecutableFile(path.resolve(cwd, trimmed)) ? ` (did you mean './${trimmed}'?)` : ''
    throw new HelixError(`agent '${trimmed}' not found on PATH${hint}`, EXIT.ERROR)
  }
  return {kind: kindOf(trimmed), name: trimmed, path: found}
}

/**
 * The review agent: HELIX_REVIEW_AGENT when set; else the other of codex/claude
 * when it is on PATH; else the implementation agent itself.
 */
export function defaultReviewAgent(impl: AgentSpec, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): AgentSpec {
  const named = env.HELIX_REVIEW_AGENT?.trim()
  if (named) return resolveAgent(named, env, cwd)
  const other = impl.kind === 'codex' ? 'claude' : impl.kind === 'claude' ? 'codex' : undefined
  if (other) {
    const found = findOnPath(other, env)
    if (found) return {kind: other, name: other, path: found}
  }
  return impl
}

const EFFORT: Record<ActionName, string> = {
  implementation: 'medium',
  check: 'low',
  alignment: 'high',
  plan: 'high',
  backfill: 'high',
  polish: 'medium',
  review: 'high',
  resolve: 'medium',
}

/** SPEC 3 default reasoning effort per action. */
export function defaultEffort(action: ActionName): string {
  return EFFORT[action]
}

export const DEFAULT_TIMEOUT_SEC = 2700

/** Parse a timeout in seconds (`--timeout` / HELIX_AGENT_TIMEOUT); bad text → HelixError naming `what`. */
export function parseTimeout(text: string | number | undefined, what = '--timeout'): number {
  if (text === undefined || text === '') return DEFAULT_TIMEOUT_SEC
  const n = typeof text === 'number' ? text : Number(String(text).trim())
  if (!Number.isFinite(n) || n <= 0) throw new HelixError(`invalid ${what} '${String(text)}' (expected a positive number of seconds)`, EXIT.ERROR)
  return n
}

export interface AgentOptionsInput {
  agent?: string
  claude?: boolean
  codex?: boolean
  model?: string
  effort?: string
  timeout?: string | number
  reviewAgent?: string
}

export interface AgentOptions {
  agent: AgentSpec
  /** explicit --model / HELIX_MODEL */
  model?: string
  /** explicit --effort / HELIX_EFFORT; when absent each action uses defaultEffort() */
  effort?: string
  timeoutSec: number
}

/**
 * Flags + environment → the agent settings of an invocation. Precedence:
 * `--claude`/`--codex`, then `--agent`, then HELIX_AGENT, then `codex`.
 */
export function resolveAgentOptions(input: AgentOptionsInput, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): AgentOptions {
  if (input.claude && input.codex) throw new HelixError(`--claude and --codex cannot be used together`, EXIT.ERROR)
  const name = input.claude ? 'claude' : input.codex ? 'codex' : input.agent ?? (env.HELIX_AGENT?.trim() || 'codex')
  const timeoutSec = input.timeout !== undefined ? parseTimeout(input.timeout, '--timeout') : parseTimeout(env.HELIX_AGENT_TIMEOUT, 'HELIX_AGENT_TIMEOUT')
  const model = input.model ?? (env.HELIX_MODEL?.trim() || undefined)
  const effort = input.effort ?? (env.HELIX_EFFORT?.trim() || undefined)
  return {agent: resolveAgent(name, env, cwd), model, effort, timeoutSec}
}
