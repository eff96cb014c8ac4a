import {spawn, spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
// @ts-expect-error plain ESM helper without types
import {installStubs} from '../../fixtures/agents/install-stubs.mjs'
import {makeTempDir, trackProcess} from '../support/tmp.js'

export const REPO = path.resolve(import.meta.dirname, '..', '..')
export const BIN = path.join(REPO, 'bin', 'run.js')

export interface Project {
  root: string
  stubDir: string
  binDir: string
  env: Record<string, string>
  tracker: string
}

/** A temp git repo with a tracker of `beads`; stubs and their state live outside the repo. */
export function project(beads: Array<Record<string, unknown>>, script: Record<string, unknown> = {}): Project {
  const base = makeTempDir('helix-loop-')
  const root = path.join(base, 'repo')
  const stubDir = path.join(base, 'stub')
  const binDir = path.join(base, 'bin')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  mkdirSync(stubDir)
  installStubs(binDir)
  spawnSync('git', ['init', '-q'], {cwd: root})
  spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init'], {cwd: root})
  const tracker = path.join(root, '.ddx', 'beads.jsonl')
  const lines = beads
    .map((b, i): Record<string, unknown> => ({status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, title: `bead ${b.id}`, ...b}))
    .sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1))
    .map((b) => JSON.stringify(b) + '\n')
    .join('')
  writeFileSync(tracker, lines)
  writeFileSync(path.join(stubDir, 'script.json'), JSON.stringify(script))
  const env: Record<string, string> = {
    PATH: `${binDir}:${process.env.PATH}`,
    HELIX_STUB_DIR: stubDir,
    NODE_ENV: 'production',
    HELIX_BACKOFF_SLEEP: '0',
    HELIX_AUTO_ALIGN: '0',
    // never pay the real 10 s SIGTERM → SIGKILL grace in tests
    HELIX_KILL_GRACE_MS: '500',
  }
  return {root, stubDir, binDir, env, tracker}
}

export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, ...extra}
  for (const k of Object.keys(env)) if (k.startsWith('HELIX_') && !(k in extra)) delete env[k]
  for (const k of ['DDX_BEAD_DIR', 'DDX_BEAD_PREFIX']) delete env[k]
  return env
}

export interface Result {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export function helix(p: Project, args: string[], extra: Record<string, string> = {}): Result {
  const r = spawnSync(process.execPath, [BIN, ...args], {cwd: p.root, env: cleanEnv({...p.env, ...extra}), encoding: 'utf8', timeout: 120_000})
  return {code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr}
}

export function helixAsync(p: Project, args: string[], extra: Record<string, string> = {}) {
  const child = trackProcess(spawn(process.execPath, [BIN, ...args], {cwd: p.root, env: cleanEnv({...p.env, ...extra})}))
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d) => (stdout += d))
  child.stderr.on('data', (d) => (stderr += d))
  const done = new Promise<Result>((resolve) => child.on('close', (code, signal) => resolve({code, signal, stdout, stderr})))
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

export interface StubCall {
  as?: string
  action: string
  bead?: string
  pid: number
  env: Record<string, string>
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
