import {copyFileSync, mkdirSync, writeFileSync} from 'node:fs'
import {spawn, type ChildProcess} from 'node:child_process'
import path from 'node:path'
import type {Bead, TrackerSnapshot} from '../../src/tracker/types.js'
import {makeTempDir, trackProcess} from '../support/tmp.js'
import {runCli} from '../support/cli.js'
import {testEnv} from '../support/env.js'

export {BIN, REPO} from '../support/cli.js'
export {waitFor} from '../support/wait.js'
export {REAL_DDX, REAL_HELIX} from '../real-trackers.js'

/** A temp directory removed after the test (test/support/tmp.ts). */
export function tempDir(prefix = 'helix-ops-'): string {
  return makeTempDir(prefix)
}

export function project(opts: {beads?: Bead[]; copy?: string} = {}): string {
  const root = makeTempDir('helix-ops-')
  mkdirSync(path.join(root, '.ddx'))
  if (opts.copy) copyFileSync(opts.copy, path.join(root, '.ddx', 'beads.jsonl'))
  else if (opts.beads) writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), opts.beads.map((b) => JSON.stringify(b)).join('\n') + '\n')
  return root
}

/** The scrubbed environment of test/support/env.ts. */
export const env = testEnv

/** The built CLI in `cwd` (test/support/cli.ts). */
export function helix(cwd: string, args: string[], extra: Record<string, string> = {}) {
  const {code, stdout, stderr} = runCli(args, {cwd, env: extra})
  return {code, stdout, stderr}
}

export function snapshot(beads: Bead[]): TrackerSnapshot {
  return {beads, byId: new Map(beads.map((b) => [b.id, b])), duplicateIds: []}
}

/** A long-lived process in its own group, killed by the caller (and after the test in any case). */
export function sleeper(seconds = 300): ChildProcess {
  const c = trackProcess(spawn('sleep', [String(seconds)], {detached: true, stdio: 'ignore'}), {group: true})
  c.unref()
  return c
}

export function killQuietly(pid: number | undefined): void {
  if (!pid) return
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone
  }
}
