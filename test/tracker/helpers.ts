import {mkdirSync, writeFileSync, readFileSync, copyFileSync} from 'node:fs'
import {createHash} from 'node:crypto'
import path from 'node:path'
import {spawn, spawnSync} from 'node:child_process'
import {projectPaths, type ProjectPaths} from '../../src/util/root.js'
import type {ProcessProbe} from '../../src/tracker/types.js'
import {makeTempDir, trackProcess} from '../support/tmp.js'

export const REPO = path.resolve(import.meta.dirname, '..', '..')
export const BIN = path.join(REPO, 'bin', 'run.js')
export {REAL_DDX, REAL_HELIX} from '../real-trackers.js'

/** A fresh temp directory, removed after the test (test/support/tmp.ts). */
export function tempDir(prefix = 'helix-tracker-'): string {
  return makeTempDir(prefix)
}

/** A temp project with `.ddx/` and optionally a tracker body. */
export function tempProject(body?: string | Buffer): {root: string; paths: ProjectPaths} {
  const root = makeTempDir('helix-tracker-')
  mkdirSync(path.join(root, '.ddx'))
  if (body !== undefined) writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), body)
  return {root, paths: projectPaths(root, {})}
}

export function copyReal(file: string): {root: string; paths: ProjectPaths} {
  const p = tempProject()
  copyFileSync(file, p.paths.file)
  return p
}

export function sha(file: string): string {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex')
  } catch {
    return 'missing'
  }
}

export interface RunResult {
  code: number | null
  stdout: string
  stderr: string
}

export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, NODE_ENV: 'production', HELIX_KILL_GRACE_MS: '500', ...extra}
  for (const k of ['HELIX_CLAIM_TOKEN', 'HELIX_BEAD_ID', 'HELIX_DISPATCH_ID', 'HELIX_TEST_PAUSE_BEFORE_RENAME', 'DDX_BEAD_DIR', 'DDX_BEAD_PREFIX', 'HELIX_OWNER', 'HELIX_LOCK_TIMEOUT', 'HELIX_ORPHAN_THRESHOLD']) {
    if (!(k in extra)) delete env[k]
  }
  return env
}

/** Run the built CLI synchronously. */
export function helix(cwd: string, args: string[], extraEnv: Record<string, string> = {}, input?: string): RunResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {cwd, env: cleanEnv(extraEnv), encoding: 'utf8', input})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

/** Run the built CLI asynchronously (for concurrency tests). */
export function helixAsync(cwd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = trackProcess(spawn(process.execPath, [BIN, ...args], {cwd, env: cleanEnv(extraEnv)}))
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({code, stdout, stderr}))
  })
}

/** A scripted ProcessProbe that counts lookups. */
export function fakeProbe(opts: {host?: string; running?: Record<number, string | undefined>; helixNames?: string[]; dispatches?: string[]} = {}): ProcessProbe & {psCalls: number; runCalls: number} {
  const running = opts.running ?? {}
  const p = {
    psCalls: 0,
    runCalls: 0,
    hostname: () => opts.host ?? 'here',
    isRunning: (pid: number) => {
      p.runCalls++
      return pid in running
    },
    startToken: (pid: number) => running[pid],
    helixProcessNamesBead: async (id: string) => {
      p.psCalls++
      return (opts.helixNames ?? []).includes(id)
    },
    /** claim tokens some live process carries a dispatch id of */
    dispatchAlive: (token: string) => (opts.dispatches ?? []).includes(token),
  }
  return p
}

