/**
 * Terminal lines of `helix run` (SPEC 6.1, 6.2). Normal mode: progress on stderr,
 * condensed agent output on stdout (unless --quiet). Summary mode: stdout stays
 * empty and stderr carries only the summary and stop lines. Every line also goes
 * to the session log. Lines are written with process.stream.write: untrusted text
 * is never a format string.
 */
import type {SessionLogLike} from '../agents/types.js'
import type {LoopOutput} from '../loop/ports.js'

export interface TerminalOptions {
  summary: boolean
  quiet: boolean
  stdout?: NodeJS.WritableStream
  stderr?: NodeJS.WritableStream
}

export function createTerminal(opts: TerminalOptions): LoopOutput {
  const stdout = opts.stdout ?? process.stdout
  const stderr = opts.stderr ?? process.stderr
  const quiet = opts.quiet || opts.summary
  let log: SessionLogLike | null = null
  const toLog = (line: string) => log?.event(line, {stream: 'helix'})
  const err = (line: string) => stderr.write(line.endsWith('\n') ? line : line + '\n')
  return {
    normal(line) {
      toLog(line)
      if (!opts.summary) err(line)
    },
    summary(line) {
      toLog(line)
      if (opts.summary) err(line)
    },
    both(line) {
      toLog(line)
      err(line)
    },
    agent(line) {
      if (!quiet) stdout.write(line.endsWith('\n') ? line : line + '\n')
    },
    stdout(text) {
      stdout.write(text)
    },
    attach(l) {
      log = l
    },
  }
}
