import {Command} from '@oclif/core'
import {HelixError, helixMessage, EXIT} from './errors.js'
import {sanitize} from './sanitize.js'

/**
 * Every helix command extends this. It turns a thrown HelixError into one line
 * on stderr and the error's exit code, and turns oclif's flag/argument parse
 * errors (unknown flag, missing argument) into one `helix: …` line and exit 1,
 * so bad input never prints a stack or a multi-line banner.
 */
export abstract class HelixCommand extends Command {
  protected override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    if (err instanceof HelixError) {
      // messages quote ids, paths and lines from the tracker: one sanitized line (SPEC 13.5)
      process.stderr.write(sanitize(helixMessage(err.message)) + '\n')
      return this.exit(err.exitCode)
    }
    // oclif's own ExitError (from this.exit): let it through untouched.
    if (err && (err as {code?: string}).code === 'EEXIT') throw err
    process.stderr.write(sanitize(helixMessage(parseErrorLine(err))) + '\n')
    return this.exit(EXIT.ERROR)
  }

  /** Print a line to stdout (untrusted text is never a format string). */
  protected out(text: string): void {
    process.stdout.write(text.endsWith('\n') ? text : text + '\n')
  }

  /** Print a line to stderr. */
  protected err(text: string): void {
    process.stderr.write(text.endsWith('\n') ? text : text + '\n')
  }
}

/**
 * One line for an oclif parse error. Its first line alone is sometimes only a
 * header ("The following error occurred:", "Missing 1 required arg:") with the
 * actual problem on the next lines, so those are folded into one line.
 */
export function parseErrorLine(err: {message?: unknown; args?: unknown}): string {
  const lines = String(err?.message ?? err)
    .split('\n')
    // eslint-disable-next-line no-control-regex -- strips oclif's own colour codes (ESC [ … m)
    .map((s) => s.replace(/\u001b\[[0-9;]*m/g, '').trim())
    .filter((s) => s !== '' && s !== 'See more help with --help')
  const first = lines[0] ?? 'error'
  if (/^The following errors? occurred:$/.test(first) && lines.length > 1) return lines.slice(1).join('; ')
  // a bad flag value: `Parsing --flag` then what is wrong with the value
  const parsing = /^Parsing (--?[\w-]+)$/.exec(first)
  if (parsing && lines.length > 1) return `invalid ${parsing[1]}: ${lines[1]}`
  const m = /^Missing (\d+) required args?/.exec(first)
  if (m) {
    const names = Array.isArray(err.args) ? err.args.map((a: {name?: unknown}) => a?.name).filter((n): n is string => typeof n === 'string') : []
    if (names.length) return `missing required argument${names.length === 1 ? '' : 's'}: ${names.join(', ')}`
  }
  return first
}
