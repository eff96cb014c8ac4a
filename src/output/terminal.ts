/**
 * Terminal lines of `helix run` (SPEC 6.1, 6.2). Normal mode: progress on stderr,
 * condensed agent output on stdout (unless --quiet). Summary mode: stdout stays
 * empty and stderr carries only the summary and stop lines. Every line also goes
 * to the session log. Lines are written with process.stream.write: untrusted text
 * is never a format string.
 */
import type {SessionLogLike} from '../agents/types.js'
import type {LoopOutput} from '../loop/ports.js'
import {sanitize} from '../util/sanitize.js'

/** ESC [ … m: colour and style only (SGR); any other escape is not let through */
// eslint-disable-next-line no-control-regex -- ESC is exactly what this pattern must match
const SGR = /\u001b\[[0-9;]*m/g

/** Agent output keeps its own colours on a colour terminal; every other control character is neutralised. */
export function agentLine(line: string, color: boolean): string {
  if (!color) return sanitize(line)
  const parts = line.split(SGR)
  const codes = line.match(SGR) ?? []
  return parts.map((p, i) => sanitize(p) + (codes[i] ?? '')).join('')
}

export interface TerminalOptions {
  summary: boolean
  quiet: boolean
  stdout?: NodeJS.WritableStream
  stderr?: NodeJS.WritableStream
  /** agent colours kept (default: stdout is a TTY and NO_COLOR is unset) */
  color?: boolean
}

export function createTerminal(opts: TerminalOptions): LoopOutput {
  const stdout = opts.stdout ?? process.stdout
  const stderr = opts.stderr ?? process.stderr
  const quiet = opts.quiet || opts.summary
  const color = opts.color ?? ((stdout as NodeJS.WriteStream).isTTY === true && (process.env.NO_COLOR ?? '') === '')
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
      if (!quiet && !outBroken) stdout.write(agentLine(line.endsWith('\n') ? line.slice(0, -1) : line, color) + '\n')
    },
    stdout(text) {
      if (!outBroken) stdout.write(text)
    },
    attach(l) {
      log = l
    },
  }
}
