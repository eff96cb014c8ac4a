import {mkdirSync, writeFileSync, readFileSync, copyFileSync} from 'node:fs'
import {expect} from 'vitest'
// @ts-expect-error plain ESM fixture without types
import {installStubs} from '../../fixtures/agents/install-stubs.mjs'
import {createHash} from 'node:crypto'
import path from 'node:path'
import {projectPaths, type ProjectPaths} from '../../src/util/root.js'
import type {ProcessProbe} from '../../src/tracker/types.js'
import {makeTempDir} from '../support/tmp.js'
import {runCli, startCli} from '../support/cli.js'
import {testEnv} from '../support/env.js'

export {BIN, REPO} from '../support/cli.js'
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

/** The scrubbed environment of test/support/env.ts. */
export const cleanEnv = testEnv

/** Run the built CLI synchronously (test/support/cli.ts). */
export function helix(cwd: string, args: string[], extraEnv: Record<string, string> = {}, input?: string): RunResult {
  const {code, stdout, stderr} = runCli(args, {cwd, env: extraEnv, input})
  return {code, stdout, stderr}
}

/** Run the built CLI asynchronously (for concurrency tests). */
export function helixAsync(cwd: string, args: string[], extraEnv: Record<string, string> = {}): Promise<RunResult> {
  return startCli(args, {cwd, env: extraEnv}).done.then(({code, stdout, stderr}) => ({code, stdout, stderr}))
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


/** `r` failed with exit `code` and exactly one stderr line (`text` or matching it), nothing on stdout */
export function oneLineError(r: {code: number | null; stdout: string; stderr: string}, code: number, text: RegExp | string): void {
  expect(r.code).toBe(code)
  expect(r.stdout).toBe('')
  const lines = r.stderr.split('\n').filter(Boolean)
  expect(lines).toHaveLength(1)
  if (typeof text === 'string') expect(lines[0]).toBe(text)
  else expect(lines[0]).toMatch(text)
}

/** A temp bin dir with the stub agents (codex, claude, agent) and a stub state dir. */
export function stubEnv(extra: Record<string, string> = {}): Record<string, string> {
  const base = tempDir('helix-stub-')
  installStubs(path.join(base, 'bin'))
  mkdirSync(path.join(base, 'state'))
  return {PATH: `${path.join(base, 'bin')}:${process.env.PATH}`, HELIX_STUB_DIR: path.join(base, 'state'), HELIX_KILL_GRACE_MS: '500', HELIX_AUTO_ALIGN: '0', HELIX_BACKOFF_SLEEP: '0', ...extra}
}
