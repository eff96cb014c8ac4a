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
  // a closed terminal or pipe (`helix run | head`) must not crash the supervisor mid-cycle:
  // stop writing to that stream and carry on (everything is in the session log anyway)
  let outBroken = false
  let errBroken = false
  stdout.on('error', () => {
    outBroken = true
  })
  stderr.on('error', () => {
    errBroken = true
  })
  const toLog = (line: string) => log?.event(line, {stream: 'helix'})
  const err = (line: string) => {
    if (!errBroken) stderr.write(line.endsWith('\n') ? line : line + '\n')
  }
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
      if (!quiet && !outBroken) stdout.write(line.endsWith('\n') ? line : line + '\n')
    },
    stdout(text) {
      if (!outBroken) stdout.write(text)
    },
    attach(l) {
      log = l
    },
  }
}
