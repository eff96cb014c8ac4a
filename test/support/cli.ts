// The one way a test runs the built CLI (bin/run.js → dist/): with the scrubbed
// environment (env.ts), in a given directory, synchronously or as a tracked child.
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {appendFileSync} from 'node:fs'
import type {Readable} from 'node:stream'
import path from 'node:path'
import {expect} from 'vitest'
import {testEnv} from './env.js'
import {trackProcess} from './tmp.js'

export const REPO = path.resolve(import.meta.dirname, '..', '..')
export const BIN = path.join(REPO, 'bin', 'run.js')

export interface CliResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  cwd: string
  /** added to the scrubbed environment (testEnv) */
  env?: NodeJS.ProcessEnv
  /** stdin text (sync runs) */
  input?: string
  /** kill the run after this long (default 120 s: a hung CLI fails its test instead of the suite) */
  timeoutMs?: number
  /** another install's bin/run.js (default: this repository's) */
  bin?: string
}

/**
 * With HELIX_TEST_SPAWN_LOG naming a file (set it for a measuring run), each CLI start
 * appends one line there: `<test file>\t<first arg>` — how the suite's spawns are counted.
 */
function countSpawn(args: string[]): void {
  const log = process.env.HELIX_TEST_SPAWN_LOG
  if (!log) return
  const file = expect.getState().testPath ?? '?'
  appendFileSync(log, `${path.relative(REPO, file)}\t${args[0] ?? ''}\n`)
}

/** Run `helix <args>` to completion. */
export function runCli(args: string[], o: CliOptions): CliResult {
  countSpawn(args)
  const r = spawnSync(process.execPath, [o.bin ?? BIN, ...args], {
    cwd: o.cwd,
    env: testEnv(o.env),
    encoding: 'utf8',
    input: o.input,
    timeout: o.timeoutMs ?? 120_000,
    maxBuffer: 256 * 1024 * 1024,
  })
  return {code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr}
}

export interface CliChild {
  child: ChildProcess & {stdout: Readable; stderr: Readable}
  /** what it printed so far */
  readonly stdout: string
  readonly stderr: string
  /** both, in the order they arrived */
  readonly output: string
  /** resolves when it has exited and its pipes closed */
  done: Promise<CliResult>
}

/** Start `helix <args>` as a tracked child (killed after the test in any case). */
export function startCli(args: string[], o: Omit<CliOptions, 'input' | 'timeoutMs'> & {detached?: boolean; stdin?: 'pipe' | 'ignore'}): CliChild {
  countSpawn(args)
  const spawned = spawn(process.execPath, [o.bin ?? BIN, ...args], {cwd: o.cwd, env: testEnv(o.env), detached: o.detached, stdio: [o.stdin ?? 'pipe', 'pipe', 'pipe']})
  const child = trackProcess(spawned as ChildProcess & {stdout: Readable; stderr: Readable}, {group: o.detached})
  let stdout = ''
  let stderr = ''
  let output = ''
  child.stdout.on('data', (d) => {
    stdout += d
    output += d
  })
  child.stderr.on('data', (d) => {
    stderr += d
    output += d
  })
  const done = new Promise<CliResult>((resolve) => child.on('close', (code, signal) => resolve({code, signal, stdout, stderr})))
  return {
    child,
    get stdout() {
      return stdout
    },
    get stderr() {
      return stderr
    },
    get output() {
      return output
    },
    done,
  }
}
