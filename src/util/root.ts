import {existsSync, statSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory()
  } catch {
    return false
  }
}

/**
 * SPEC 1: the project root is the nearest ancestor of `cwd` holding `.ddx/`,
 * else the git top level, else `cwd` itself.
 */
export function findProjectRoot(cwd: string = process.cwd()): string {
  let dir = path.resolve(cwd)
  for (;;) {
    if (isDir(path.join(dir, '.ddx'))) return dir
    const parent = path.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  const git = spawnSync('git', ['rev-parse', '--show-toplevel'], {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore']})
  if (git.status === 0) {
    const top = git.stdout.trim()
    if (top && existsSync(top)) return top
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
  const root = findProjectRoot(cwd)
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
