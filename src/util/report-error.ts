/**
 * The one way a failure leaves a command (every oclif command through HelixCommand's
 * `catch`, oclif's own failures in src/cli/oclif-entry.ts, and the startup fast path).
 *
 * Two kinds, as Shopify's CLI splits AbortError from BugError:
 * - a HelixError is the operator's to fix (bad input, a busy run, a lost claim): its
 *   message on one sanitized `helix: …` line, and its own exit code;
 * - anything else is a bug in helix: `helix: internal error: <message> (a bug in helix;
 *   the stack is in <file>)`, exit 1, with the stack kept in a file rather than lost or
 *   spilled on the terminal. The file is the session log when this invocation opened
 *   one, else `.helix-logs/internal-error-<stamp>-<pid>.log` in the project, else the
 *   same name in the OS temp directory.
 */
import {appendFileSync, mkdirSync, writeFileSync} from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {EXIT, HelixError, errorMessage, helixMessage} from './errors.js'
import {findDdxRoot} from './root.js'
import {sanitize} from './sanitize.js'
import {fileStamp} from './time.js'

/** What reportError needs to know of the session log (src/output/session-log.ts registers it). */
export type BugLog = {
  path: string
  /** writes a record while the log is open; undefined once it is closed (then a JSON line is appended) */
  write?: (msg: string, fields: Record<string, unknown>) => void
}

let bugLog: BugLog | undefined

/** The session log an internal error's stack should go to (the last one opened by this process). */
export function setBugLog(log: BugLog | undefined): void {
  bugLog = log
}

/** The session log at `file` was closed: a later internal error is appended to it as a JSON line (if it is still the last one opened). */
export function bugLogClosed(file: string): void {
  if (bugLog?.path === file) bugLog = {path: file}
}

export type ReportOptions = {
  /** where the line goes (default: stderr) */
  write?: (line: string) => void
  /** where a project is looked for (default: the current directory) */
  cwd?: string
  /** the fallback directory (default: os.tmpdir()) */
  tmpdir?: string
  now?: Date
}

/** Prints the one line for `error` and returns the exit code the process should end with. */
export function reportError(error: unknown, opts: ReportOptions = {}): number {
  const write = opts.write ?? ((line: string) => void process.stderr.write(line))
  if (error instanceof HelixError) {
    // messages quote ids, paths and lines from the tracker: one sanitized line (SPEC 13.5)
    write(sanitize(helixMessage(error.message)) + '\n')
    return error.exitCode
  }
  const message = errorMessage(error)
  const where = keepStack(error, message, opts)
  const tail = where ? `the stack is in ${where}` : 'its stack could not be saved'
  write(sanitize(`helix: internal error: ${message} (a bug in helix; ${tail})`) + '\n')
  return EXIT.ERROR
}

function stackOf(error: unknown, message: string): string {
  const stack = error instanceof Error ? error.stack : undefined
  return stack ?? `${message}\n    (thrown value was not an Error: no stack)`
}

/** Keeps the stack in a file; returns its path, or null when no file could be written. */
function keepStack(error: unknown, message: string, opts: ReportOptions): string | null {
  const now = opts.now ?? new Date()
  const stack = stackOf(error, message)
  const fields = {internal_error: true, stack, argv: process.argv.slice(2), node: process.version}
  if (bugLog) {
    try {
      if (bugLog.write) bugLog.write(`internal error: ${message}`, fields)
      // the same record shape as pino's (level 50 = error), so `helix logs` reads it
      else appendFileSync(bugLog.path, JSON.stringify({level: 50, time: now.getTime(), msg: `internal error: ${message}`, ...fields}) + '\n')
      return bugLog.path
    } catch {
      // the session log is gone or full: fall through to a file of its own
    }
  }
  const name = `internal-error-${fileStamp(now)}-${process.pid}.log`
  const text = `helix internal error, ${now.toISOString()}\nargv: ${JSON.stringify(fields.argv)}\nnode: ${process.version}\ncwd: ${opts.cwd ?? safeCwd()}\n\n${stack}\n`
  const project = findDdxRoot(opts.cwd ?? safeCwd())
  const dirs = [project ? path.join(project, '.helix-logs') : null, opts.tmpdir ?? os.tmpdir()].filter((d): d is string => d !== null)
  for (const dir of dirs) {
    const file = path.join(dir, name)
    try {
      mkdirSync(dir, {recursive: true})
      writeFileSync(file, text, {flag: 'a', mode: 0o600})
      return file
    } catch {
      // not writable: try the next place
    }
  }
  return null
}

function safeCwd(): string {
  try {
    return process.cwd()
  } catch {
    // the current directory was removed: no project to find from there
    return os.tmpdir()
  }
}
