import {Command} from '@oclif/core/command'
import {HelixError, unexpectedArgument} from '../util/errors.js'
import {reportError} from '../util/report-error.js'
import {closest} from '../util/suggest.js'

/** oclif's flag table entry, as far as the did-you-mean reads it */
type FlagDef = {char?: string; aliases?: string[]; allowNo?: boolean; type?: string}

/**
 * Every helix command extends this. Every failure goes through `reportError`
 * (src/util/report-error.ts), the one function the startup fast path uses too: a
 * HelixError is one `helix: …` line and its exit code, a bug is one `internal error`
 * line with its stack kept in a file. oclif's flag and argument parse errors (an
 * unknown flag, a missing or extra argument) are bad input: they become a HelixError
 * of one line, with the closest flag for an unknown one, exit 1 (SPEC 10: 2 means busy).
 */
export abstract class HelixCommand extends Command {
  protected override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    // oclif's own ExitError (from this.exit): let it through untouched.
    if (err && (err as {code?: string}).code === 'EEXIT') throw err
    return this.exit(reportError(isOclifError(err) ? this.parseError(err) : err))
  }

  /** An oclif parse error as the one line of bad input it stands for. */
  private parseError(err: Error & {flags?: unknown; args?: unknown}): HelixError {
    const line = parseErrorLine(err)
    if (/^Unexpected arguments?: /.test(line)) return unexpectedArgument(this.id, Array.isArray(err.args) ? err.args.map(String) : [line.replace(/^Unexpected arguments?: /, '')])
    if (/^Nonexistent flags?: /.test(line)) {
      const ctor = this.constructor as {flags?: Record<string, FlagDef>; baseFlags?: Record<string, FlagDef>}
      const hint = Array.isArray(err.flags) && err.flags.length === 1 ? suggestFlag(String(err.flags[0]), {...ctor.baseFlags, ...ctor.flags}) : null
      return new HelixError(`${line} (${hint ? `did you mean ${hint}?` : `'helix ${this.id?.replaceAll(':', ' ') ?? ''} --help' lists them`})`)
    }
    const flag = /^Missing required flags? (.+)$/.exec(line)
    if (flag) return new HelixError(`missing required flag ${flag[1].split(/,\s*/).map((f) => `--${f.replace(/^-+/, '')}`).join(', ')} ('helix ${this.id?.replaceAll(':', ' ') ?? ''} --help' says what it takes)`)
    if (/^missing required argument/.test(line)) return new HelixError(`${line} (usage: ${usageLine(this.id, (this.constructor as {args?: Record<string, {required?: boolean}>}).args)})`)
    return new HelixError(line)
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

/** `helix tracker dep add <id> <depends-on> [more]`: the command and its arguments, required ones in <>. */
export function usageLine(id: string | undefined, args: Record<string, {required?: boolean}> | undefined): string {
  const names = Object.entries(args ?? {}).map(([name, a]) => (a.required ? `<${name}>` : `[${name}]`))
  return ['helix', ...(id ? id.split(':') : []), ...names].join(' ')
}

/** oclif's errors (CLIError and the parser's) carry `oclif: {exit}`; a helix bug does not. */
function isOclifError(err: unknown): err is Error & {flags?: unknown; args?: unknown} {
  const o = (err as {oclif?: unknown} | null | undefined)?.oclif
  return err instanceof Error && typeof o === 'object' && o !== null
}

/** The flag of `flags` closest to the unknown `typed` (`--wokers`, `--wokers=2`), as it is written on the command line. */
export function suggestFlag(typed: string, flags: Record<string, FlagDef>): string | null {
  const word = typed.split('=')[0]
  if (!word.startsWith('--')) return null
  const known = Object.entries(flags).flatMap(([name, f]) => [name, ...(f.aliases ?? []), ...(f.allowNo ? [`no-${name}`] : [])].map((n) => `--${n}`))
  return closest(word, known)
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
  if (parsing && lines.length > 1) return `invalid ${parsing[1]}${integerWords(lines[1])}`
  const twice = /^Flag (--?[\w-]+) can only be specified once$/.exec(first)
  if (twice) return `${twice[1]} is given more than once; give it once`
  // a value outside a flag's options: helix's words, as for every other bad value
  const option = /^Expected (--[\w-]+)=(.*) to be one of: (.+)$/.exec(first)
  if (option) return `invalid ${option[1]} '${option[2]}': expected ${option[3].split(/,\s*/).join(' or ')}`
  const m = /^Missing (\d+) required args?/.exec(first)
  if (m) {
    const names = Array.isArray(err.args) ? err.args.map((a: {name?: unknown}) => a?.name).filter((n): n is string => typeof n === 'string') : []
    if (names.length) return `missing required argument${names.length === 1 ? '' : 's'}: ${names.join(', ')}`
  }
  return first
}

/**
 * oclif's words for a whole-number flag out of range ("Expected an integer greater than or
 * equal to 0 but received: -1") in helix's own, like the flags helix checks itself:
 * ` '-1': expected a whole number ≥ 0`. Any other reason is kept after a colon.
 */
function integerWords(reason: string): string {
  const m = /^Expected an integer(?: (greater|less) than or equal to (-?\d+))? but received:\s?(.*)$/.exec(reason)
  if (!m) return `: ${reason}`
  const bound = m[1] === undefined ? '' : ` ${m[1] === 'greater' ? '≥' : '≤'} ${m[2]}`
  return ` '${m[3]}': expected a whole number${bound}`
}

