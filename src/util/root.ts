import {existsSync, statSync} from 'node:fs'
import path from 'node:path'
import {EXIT, HelixError} from './errors.js'
import {sanitize} from './sanitize.js'

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory()
  } catch {
    // missing or unreadable: not a directory helix can use as a root
    return false
  }
}

export const NOT_A_PROJECT = "not a helix project (no .ddx/ here or above); run 'helix tracker init' at the project root"

/** The nearest ancestor of `cwd` (itself included) holding a `.ddx/` directory, or null. */
export function findDdxRoot(cwd: string = process.cwd()): string | null {
  let dir = path.resolve(cwd)
  for (;;) {
    if (isDir(path.join(dir, '.ddx'))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) return null
    dir = parent
  }
}

/**
 * The project root: the nearest ancestor of `cwd` holding `.ddx/`. There is no
 * fallback to the git top level or the cwd: outside a project this throws the
 * one-line "not a helix project" error (exit 1), so nothing is written there.
 * An explicit tracker directory (`DDX_BEAD_DIR`, which must exist) also makes a
 * project; its root is then the nearest `.ddx/` ancestor, else the cwd.
 */
export function findProjectRoot(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): string {
  const root = findDdxRoot(cwd)
  if (root) return root
  if (env.DDX_BEAD_DIR && isDir(path.resolve(cwd, env.DDX_BEAD_DIR))) return path.resolve(cwd)
  throw new HelixError(NOT_A_PROJECT)
}

/** Where `tracker init` puts `.ddx/`: the git top level, or the cwd without git. */
export function initRoot(cwd: string = process.cwd()): string {
  // looked up here, not imported at the top: child_process (and the net/stream modules it
  // loads) would otherwise cost every command that only needs the project root
  const {spawnSync} = process.getBuiltinModule('node:child_process') as typeof import('node:child_process')
  const git = spawnSync('git', ['rev-parse', '--show-toplevel'], {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']})
  if (git.status === 0) {
    const top = git.stdout.trim()
    if (top && existsSync(top)) return top
  } else {
    // a bare repository, or inside .git: git answers, but there is no work tree to put .ddx/ in
    const inside = spawnSync('git', ['rev-parse', '--is-inside-git-dir'], {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']})
    if (inside.status === 0 && inside.stdout.trim() === 'true') {
      throw new HelixError(`${sanitize(path.resolve(cwd))} is a git repository's own directory (a bare repository or inside .git), not a work tree; run 'helix tracker init' in a checkout of it`, EXIT.ERROR)
    }
  }
  return path.resolve(cwd)
}

export interface ProjectPaths {
  /** project root (SPEC 1) */
  root: string
  /** tracker directory: DDX_BEAD_DIR or <root>/.ddx */
  dir: string
  /** <dir>/beads.jsonl */
  file: string
  /** <dir>/beads.lock (a directory, shared with DDx's writer) */
  lockDir: string
  /** <root>/.ddx/helix.pid */
  pidFile: string
  /** <root>/.ddx/run-state.json */
  runState: string
  /** <root>/.helix-logs */
  logDir: string
  /** <root>/.helix/context.md */
  contextFile: string
}

export function projectPaths(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): ProjectPaths {
  return pathsAt(findProjectRoot(cwd, env), env)
}

/** The paths `tracker init` creates: `.ddx/` at the git top level (or cwd), unless already inside a project. */
export function initPaths(cwd: string = process.cwd(), env: NodeJS.ProcessEnv = process.env): ProjectPaths {
  return pathsAt(findDdxRoot(cwd) ?? initRoot(cwd), env)
}

function pathsAt(root: string, env: NodeJS.ProcessEnv): ProjectPaths {
  const dir = env.DDX_BEAD_DIR ? path.resolve(root, env.DDX_BEAD_DIR) : path.join(root, '.ddx')
  return {
    root,
    dir,
    file: path.join(dir, 'beads.jsonl'),
    lockDir: path.join(dir, 'beads.lock'),
    pidFile: path.join(root, '.ddx', 'helix.pid'),
    runState: path.join(root, '.ddx', 'run-state.json'),
    logDir: path.join(root, '.helix-logs'),
    contextFile: path.join(root, '.helix', 'context.md'),
  }
}
