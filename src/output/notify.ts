/**
 * `--notify CMD` / `HELIX_NOTIFY` (SPEC 14.6): CMD is split on spaces into argv
 * (no shell) and runs once per event with one JSON line on stdin. A notifier is
 * bounded (10 s, then its whole process group is killed); a failing or hanging
 * one is logged and never stops the run. Untrusted text reaches it only inside
 * the JSON.
 */
import {spawn} from 'node:child_process'
import path from 'node:path'
import {findOnPath} from '../agents/resolve.js'
import {HelixError, errorMessage, EXIT} from '../util/errors.js'
import {isExecutableFile} from '../util/files.js'
import {signalGroup} from '../proc/process.js'
import {sanitize} from '../util/sanitize.js'

export const NOTIFY_TIMEOUT_MS = 10_000

export interface Notifier {
  /** runs the command with `JSON.stringify(event)` + newline on stdin; resolves when it ended or was killed; never rejects */
  send(event: object): Promise<void>
}

/** The argv words of CMD: split on spaces, empty words dropped. */
export function notifyArgv(cmd: string): string[] {
  return cmd.split(' ').filter((w) => w.length > 0)
}

/**
 * Bad input check at start (exit 1, nothing changed): the first word is an
 * executable file (a path with a `/`, relative to `cwd`) or a command on PATH.
 * Returns the argv with the executable resolved.
 */
export function validateNotify(cmd: string, env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): string[] {
  const argv = notifyArgv(cmd)
  const bad = (): HelixError => new HelixError(`helix: --notify: ${argv.length ? sanitize(argv[0]) : '(empty)'}: not an executable file or command on PATH`, EXIT.ERROR)
  if (argv.length === 0) throw bad()
  const [first, ...rest] = argv
  const file = first.includes('/') ? (isExecutableFile(path.resolve(cwd, first)) ? path.resolve(cwd, first) : undefined) : findOnPath(first, env)
  if (!file) throw bad()
  return [file, ...rest]
}

export interface NotifierOptions {
  /** one line per failure (`helix: --notify …`) */
  log?: (line: string) => void
  env?: NodeJS.ProcessEnv
  cwd?: string
  /** default 10 s (SPEC 14.6) */
  timeoutMs?: number
}

/**
 * A notifier for CMD (validated here too; a command that disappeared later only
 * logs). Events are sent one at a time, in the order `send` was called.
 */
export function createNotifier(cmd: string, opts: NotifierOptions = {}): Notifier {
  const env = opts.env ?? process.env
  const log = opts.log ?? (() => {})
  const timeoutMs = opts.timeoutMs ?? NOTIFY_TIMEOUT_MS
  const argv = validateNotify(cmd, env, opts.cwd)
  const label = sanitize(path.basename(argv[0]))
  let chain: Promise<void> = Promise.resolve()

  function once(event: object): Promise<void> {
    return new Promise<void>((resolve) => {
      let line: string
      try {
        line = JSON.stringify(event) + '\n'
      } catch (error) {
        log(`helix: --notify ${label}: event not sent (${sanitize(errorMessage(error))})`)
        resolve()
        return
      }
      let child
      try {
        child = spawn(argv[0], argv.slice(1), {cwd: opts.cwd, env, stdio: ['pipe', 'ignore', 'pipe'], detached: true})
      } catch (error) {
        log(`helix: --notify ${label} failed: ${sanitize(errorMessage(error))}`)
        resolve()
        return
      }
      let stderr = ''
      let timedOut = false
      const killGroup = (): void => {
        if (child.pid) signalGroup(child.pid, 'SIGKILL') // false when already gone
      }
      const timer = setTimeout(() => {
        timedOut = true
        killGroup()
      }, timeoutMs)
      child.stderr?.setEncoding('utf8').on('data', (d: string) => {
        if (stderr.length < 4096) stderr += d
      })
      child.stdin?.on('error', () => {}) // a notifier that does not read its stdin
      child.on('error', (error) => {
        clearTimeout(timer)
        log(`helix: --notify ${label} failed: ${sanitize(error.message)}`)
        resolve()
      })
      child.on('close', (code, signal) => {
        clearTimeout(timer)
        // the notifier's leftovers (a backgrounded child) go with it
        if (!timedOut) killGroup()
        const why = stderr.trim().split('\n')[0]
        if (timedOut) log(`helix: --notify ${label} took more than ${Math.round(timeoutMs / 1000)} s; killed`)
        else if (code !== 0) log(`helix: --notify ${label} failed (${signal ? `signal ${signal}` : `exit ${code}`})${why ? `: ${sanitize(why)}` : ''}`)
        resolve()
      })
      child.stdin?.end(line)
    })
  }

  return {
    send(event: object): Promise<void> {
      const p = chain.then(() => once(event))
      chain = p
      return p
    },
  }
}
