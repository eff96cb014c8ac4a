import {Command} from '@oclif/core'
import {HelixError, helixMessage} from './errors.js'

/**
 * Every helix command extends this. It turns a thrown HelixError into one line
 * on stderr and the error's exit code, and turns oclif's flag/argument parse
 * errors (unknown flag, missing argument) into one `helix: …` line and exit 1,
 * so bad input never prints a stack or a multi-line banner.
 */
export abstract class HelixCommand extends Command {
  protected override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    if (err instanceof HelixError) {
      process.stderr.write(helixMessage(err.message) + '\n')
      return this.exit(err.exitCode)
    }
    // oclif's own ExitError (from this.exit): let it through untouched.
    if (err && (err as {code?: string}).code === 'EEXIT') throw err
    const lines = String(err?.message ?? err).split('\n').map((s) => s.trim()).filter(Boolean)
    let first = lines[0] ?? 'error'
    // oclif's bad flag value is two lines: `Parsing --flag` and what is wrong with the value
    const parsing = /^Parsing (--?[\w-]+)$/.exec(first)
    if (parsing && lines[1]) first = `invalid ${parsing[1]}: ${lines[1]}`
    process.stderr.write(helixMessage(first) + '\n')
    return this.exit(1)
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
