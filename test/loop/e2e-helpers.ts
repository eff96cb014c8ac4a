import {chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {runCli, startCli, type CliResult} from '../support/cli.js'
import {testEnv} from '../support/env.js'
import {helixInProcess, type InProcessResult} from '../support/in-process.js'
import {helixProjectSync, type HelixProject, type StubCall} from '../support/project.js'

export {BIN, REPO} from '../support/cli.js'
export type {StubCall} from '../support/project.js'

export interface Project {
  root: string
  stubDir: string
  binDir: string
  env: Record<string, string>
  tracker: string
}

/** A temp git repo with a tracker of `beads`; stubs and their state live outside the repo (test/support/project.ts). */
export function project(beads: Array<Record<string, unknown>>, script: Record<string, unknown> = {}): HelixProject {
  return helixProjectSync({beads, agent: script, git: true, prefix: 'helix-loop-'})
}

/** The scrubbed environment of test/support/env.ts. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return testEnv(extra)
}

export type Result = CliResult

export function helix(p: Project, args: string[], extra: Record<string, string> = {}): Result {
  return runCli(args, {cwd: p.root, env: {...p.env, ...extra}})
}

/** `helix <args>` in the test's own process (src/, no node start): for what a run prints, writes and refuses */
export function helixIn(p: Project, args: string[], extra: Record<string, string> = {}): Promise<InProcessResult> {
  return helixInProcess(p.root, args, {...p.env, ...extra})
}

export function helixAsync(p: Project, args: string[], extra: Record<string, string> = {}) {
  const {child, done} = startCli(args, {cwd: p.root, env: {...p.env, ...extra}})
  return {child, done}
}

export function beads(p: Project): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>()
  for (const line of readFileSync(p.tracker, 'utf8').split('\n')) {
    if (!line.trim()) continue
    const b = JSON.parse(line)
    out.set(b.id, b)
  }
  return out
}

export function calls(p: Project): StubCall[] {
  const f = path.join(p.stubDir, 'calls.jsonl')
  if (!existsSync(f)) return []
  return readFileSync(f, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

export function implOrder(p: Project): string[] {
  return calls(p)
    .filter((c) => c.action === 'implementation')
    .map((c) => c.bead as string)
}

export function runState(p: Project): Record<string, any> {
  return JSON.parse(readFileSync(path.join(p.root, '.ddx', 'run-state.json'), 'utf8'))
}

export function writeExecutable(file: string, text: string): void {
  mkdirSync(path.dirname(file), {recursive: true})
  writeFileSync(file, text)
  chmodSync(file, 0o755)
}

export function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
    return state === 'Z' || state === 'X'
  } catch {
    return true
  }
}
