// The one test project: `await using project = await helixProject({beads, agent, git})`.
//
// A temp directory holding `repo/` (the project: `.ddx/beads.jsonl`, optionally a git
// repository with one commit), and, with `agent`, `bin/` (stub codex, claude and
// `agent` first on PATH) and `stub/` (the stubs' script and call log) outside the repo.
// `project.helix(args)` / `project.start(args)` run the built CLI there with the
// project's environment (scrubbed, env.ts). Disposing it (end of the `await using`
// block) kills what it started and removes the directory; the per-test cleanup of
// tmp.ts does the same if a test never disposes it.
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
// @ts-expect-error plain ESM fixture without types
import {installStubs} from '../../fixtures/agents/install-stubs.mjs'
import {runCli, startCli, type CliChild, type CliResult} from './cli.js'
import {KILL_GRACE_MS} from './env.js'
import {git as gitIn, gitSeq, initRepo, writeFiles} from './git.js'
import {makeTempDir, removeDir} from './tmp.js'
import {waitFor} from './wait.js'

export interface ProjectOptions {
  /** the tracker: beads (defaults filled in: open, P2, task, `bead <id>` title, ordered created_at), or raw file text; no `.ddx/beads.jsonl` when omitted */
  beads?: Array<Record<string, unknown>> | string
  /** stub agents on PATH; an object is the stubs' script.json */
  agent?: boolean | Record<string, unknown>
  /** make the project a git repository on main with one commit (empty: the tracker and `files` stay untracked, unless `commitAll`) */
  git?: boolean
  /** files (path → text) written into the project before its first commit */
  files?: Record<string, string>
  /** the first commit holds everything (tracker and `files`), by `Operator <op@example.com>` */
  commitAll?: boolean
  /** directory name prefix under $TMPDIR */
  prefix?: string
}

export interface StubCall {
  as?: string
  action: string
  bead?: string
  pid: number
  env: Record<string, string>
  [k: string]: unknown
}

export interface HelixProject extends AsyncDisposable {
  /** the temp directory holding repo/, bin/ and stub/ */
  base: string
  /** the project (cwd of every CLI call) */
  root: string
  tracker: string
  /** the stubs' bin dir (first on PATH) and state dir, when `agent` was given */
  binDir: string
  stubDir: string
  /** what every CLI call gets on top of the scrubbed environment */
  env: Record<string, string>
  /** `helix <args>` to completion */
  helix(args: string[], env?: Record<string, string>): CliResult
  /** `helix <args>` as a tracked child */
  start(args: string[], env?: Record<string, string>): CliChild
  /** the tracker as it is on disk, by id */
  beads(): Map<string, Record<string, any>>
  /** replace the stubs' script */
  script(s: Record<string, unknown>): void
  /** what the stub agents were asked to do, in order */
  calls(): StubCall[]
  /** .ddx/run-state.json */
  runState(): Record<string, any>
  /** git in the project (test identity), trimmed stdout */
  git(...args: string[]): string
  /** wait for a condition on the project (see wait.ts) */
  waitFor: typeof waitFor
}

/** Beads with the defaults a tracker line needs, in id order (the order `tracker` writes). */
export function trackerText(beads: Array<Record<string, unknown>>): string {
  return beads
    .map((b, i): Record<string, unknown> => ({status: 'open', priority: 2, issue_type: 'task', created_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`, title: `bead ${String(b.id)}`, ...b}))
    .sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1))
    .map((b) => JSON.stringify(b) + '\n')
    .join('')
}

export function helixProjectSync(o: ProjectOptions = {}): HelixProject {
  const base = makeTempDir(o.prefix ?? 'helix-project-')
  const root = path.join(base, 'repo')
  const stubDir = path.join(base, 'stub')
  const binDir = path.join(base, 'bin')
  const tracker = path.join(root, '.ddx', 'beads.jsonl')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    HELIX_KILL_GRACE_MS: KILL_GRACE_MS,
    HELIX_BACKOFF_SLEEP: '0',
    HELIX_AUTO_ALIGN: '0',
  }
  if (o.agent) {
    mkdirSync(stubDir)
    installStubs(binDir)
    writeFileSync(path.join(stubDir, 'script.json'), JSON.stringify(o.agent === true ? {} : o.agent))
    env.PATH = `${binDir}${path.delimiter}${process.env.PATH ?? ''}`
    env.HELIX_STUB_DIR = stubDir
  }
  const git = (...args: string[]) => gitIn(root, ...args)
  const writeTracker = () => {
    if (o.beads !== undefined) writeFileSync(tracker, typeof o.beads === 'string' ? o.beads : trackerText(o.beads))
  }
  if (o.files) writeFiles(root, o.files)
  if (o.commitAll) writeTracker()
  if (o.git && o.commitAll) initRepo(root)
  else if (o.git) {
    gitSeq(root, ['init', '-q', '-b', 'main'], ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init'])
  }
  if (!o.commitAll) writeTracker()
  const started: CliChild[] = []
  const p: HelixProject = {
    base,
    root,
    tracker,
    binDir,
    stubDir,
    env,
    helix: (args, extra = {}) => runCli(args, {cwd: root, env: {...env, ...extra}}),
    start(args, extra = {}) {
      const c = startCli(args, {cwd: root, env: {...env, ...extra}})
      started.push(c)
      return c
    },
    beads() {
      const out = new Map<string, Record<string, any>>()
      for (const line of readFileSync(tracker, 'utf8').split('\n')) {
        if (!line.trim()) continue
        const b = JSON.parse(line) as Record<string, any>
        out.set(String(b.id), b)
      }
      return out
    },
    script(s) {
      writeFileSync(path.join(stubDir, 'script.json'), JSON.stringify(s))
    },
    calls() {
      const f = path.join(stubDir, 'calls.jsonl')
      if (!existsSync(f)) return []
      return readFileSync(f, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as StubCall)
    },
    runState: () => JSON.parse(readFileSync(path.join(root, '.ddx', 'run-state.json'), 'utf8')) as Record<string, any>,
    git,
    waitFor,
    async [Symbol.asyncDispose]() {
      for (const c of started) {
        if (c.child.exitCode !== null || c.child.signalCode !== null) continue
        c.child.kill('SIGKILL')
        await c.done
      }
      removeDir(base)
    },
  }
  return p
}

/** `await using project = await helixProject({beads, agent, git})` */
export async function helixProject(o: ProjectOptions = {}): Promise<HelixProject> {
  return helixProjectSync(o)
}
