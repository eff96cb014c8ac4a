import {copyFileSync, mkdirSync, writeFileSync} from 'node:fs'
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import path from 'node:path'
import type {Bead, TrackerSnapshot} from '../../src/tracker/types.js'
import {makeTempDir, trackProcess} from '../support/tmp.js'

export const REPO = path.resolve(import.meta.dirname, '..', '..')
export const BIN = path.join(REPO, 'bin', 'run.js')
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

export function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {...process.env, NODE_ENV: 'production', HELIX_KILL_GRACE_MS: '500', ...extra}
  for (const k of ['HELIX_CLAIM_TOKEN', 'DDX_BEAD_DIR', 'HELIX_OWNER', 'HELIX_ORPHAN_THRESHOLD', 'HELIX_AGENT', 'HELIX_REVIEW_AGENT']) if (!(k in extra)) delete e[k]
  return e
}

export function helix(cwd: string, args: string[], extra: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {cwd, env: env(extra), encoding: 'utf8', maxBuffer: 256 * 1024 * 1024})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
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

export async function waitFor(cond: () => boolean, ms = 10_000, step = 50): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (cond()) return true
    await new Promise((r) => setTimeout(r, step))
  }
  return cond()
}
