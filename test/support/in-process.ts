// A command run inside the test's own process (issue 30 item 2): no node start, no oclif
// bundle to load, ~1 ms instead of ~50–100 ms of CPU. For tests of what a command says
// and does (text, files); what crosses the process boundary (exit codes as the shell
// sees them, signals, pipes, the agent calling helix) stays in e2e tests with runCli.
// The command class comes from src/ (vitest transforms it), oclif's Config from this
// repository's package.json and manifest. The run gets `cwd` as its working directory
// and the scrubbed environment of env.ts (plus `env`); both are restored afterwards,
// as is anything written to process.exitCode, the 'error' listeners a run's terminal puts
// on stdout and stderr, and the SIGINT / SIGTERM / SIGHUP handlers
// a command installs (`helix run` arms its own at its first line, before its flags are
// read, so a refused flag would leave them on the shared vitest worker: isolate: false).
// Not for concurrent use within one file.
import {existsSync} from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'
import type {Command} from '@oclif/core'
import {REPO} from './cli.js'
import {testEnv} from './env.js'

export interface InProcessResult {
  code: number
  stdout: string
  stderr: string
}

/** a concrete command class (oclif's static `run` needs one it can construct) */
type CommandClass = typeof Command

/** the signals a command may take over (run-signals.ts, the watch commands' `once` handlers) */
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
type Listener = (...args: unknown[]) => void

/** Puts the signal handlers back as they were: what the run added comes off, helix's run signals are disarmed. */
async function restoreSignals(before: Map<string, Listener[]>): Promise<void> {
  // `helix run`'s controller is module state (one per process): disarm it, so the next run arms afresh
  const {armRunSignals} = await import('../../src/cli/run-signals.js')
  armRunSignals().dispose()
  for (const s of SIGNALS) {
    const had = before.get(s) ?? []
    for (const l of process.listeners(s) as Listener[]) if (!had.includes(l)) process.off(s, l)
  }
}

/** the 'error' listeners of stdout and stderr now (a run's terminal adds one to each, for a reader that goes away) */
function streamListeners(): [NodeJS.WriteStream, Listener[]][] {
  return [process.stdout, process.stderr].map((s) => [s, s.listeners('error') as Listener[]])
}

/** takes off the stream listeners added since `before`: in a real process one run owns them till exit; here they would pile up on the reused worker */
function restoreStreams(before: [NodeJS.WriteStream, Listener[]][]): void {
  for (const [s, had] of before) for (const l of s.listeners('error') as Listener[]) if (!had.includes(l)) s.off('error', l)
}

/** Runs `Cmd` with `args` as `helix <id> <args>` would, capturing stdout, stderr and the exit code. */
export interface InProcessOptions {
  cwd: string
  env?: NodeJS.ProcessEnv
  /**
   * NODE_ENV for the run (default 'test'). What the command spawns inherits it: an agent's
   * `helix` call (the PATH shim runs bin/run.js) takes the fast path and dist/ only under
   * 'production'; under 'test' it loads src/ through tsx (~1 CPU-s a call). So a test whose
   * agents call helix passes 'production' and stays in the e2e project (it needs dist/).
   */
  nodeEnv?: 'test' | 'production'
}

export async function runInProcess(Cmd: CommandClass, args: string[], o: InProcessOptions): Promise<InProcessResult> {
  const saved = {env: process.env, cwd: process.cwd(), exitCode: process.exitCode, out: process.stdout.write, err: process.stderr.write}
  let stdout = ''
  let stderr = ''
  const capture = (add: (s: string) => void) =>
    function (chunk: unknown, ...rest: unknown[]): boolean {
      add(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'))
      const cb = rest.find((r) => typeof r === 'function') as (() => void) | undefined
      cb?.()
      return true
    }
  const listeners = new Map<string, Listener[]>(SIGNALS.map((s) => [s, process.listeners(s) as Listener[]]))
  const streams = streamListeners()
  process.env = {...testEnv(o.env), NODE_ENV: o.nodeEnv ?? 'test'}
  process.exitCode = undefined
  process.chdir(o.cwd)
  process.stdout.write = capture((s) => (stdout += s)) as typeof process.stdout.write
  process.stderr.write = capture((s) => (stderr += s)) as typeof process.stderr.write
  let code = 0
  try {
    await (Cmd as unknown as {run(argv: string[], opts: string): Promise<unknown>}).run(args, REPO)
    code = typeof process.exitCode === 'number' ? process.exitCode : 0
  } catch (error) {
    const e = error as {code?: string; oclif?: {exit?: number}}
    if (e?.code !== 'EEXIT') throw error
    code = e.oclif?.exit ?? 1
  } finally {
    process.stdout.write = saved.out
    process.stderr.write = saved.err
    process.chdir(saved.cwd)
    process.env = saved.env
    process.exitCode = saved.exitCode
    await restoreSignals(listeners)
    restoreStreams(streams)
  }
  return {code, stdout, stderr}
}

/**
 * `helix <args>` in-process: the command is the longest run of leading words that names a
 * file under src/commands/ (`tracker dep add` → src/commands/tracker/dep/add.ts), the rest
 * its argv, as oclif finds it for a known command.
 */
export async function helixInProcess(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}, nodeEnv?: InProcessOptions['nodeEnv']): Promise<InProcessResult> {
  let n = 0
  for (let i = 1; i <= args.length && !args[i - 1].startsWith('-'); i++) {
    if (existsSync(path.join(REPO, 'src', 'commands', ...args.slice(0, i)) + '.ts')) n = i
  }
  if (n === 0) throw new Error(`no command in ${JSON.stringify(args)}`)
  const mod = (await import(pathToFileURL(path.join(REPO, 'src', 'commands', ...args.slice(0, n)) + '.ts').href)) as {default: CommandClass}
  // the id oclif would have found it by ('tracker:show'); without one oclif names the command
  // after its class ('trackershow') and writes that onto the class, so a message naming the
  // command ('helix tracker show: unexpected argument …') would differ from the CLI's
  mod.default.id = args.slice(0, n).join(':')
  return runInProcess(mod.default, args.slice(n), {cwd, env, nodeEnv})
}
