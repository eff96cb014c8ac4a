/**
 * What a helix command needs of `@oclif/core` to run, without the rest of it: the
 * direct build (scripts/bundle.mjs) bundles every command a second time with
 * `@oclif/core` resolved to this file, into dist/direct/. There the command's flags and
 * arguments are still parsed by oclif's own parser, with oclif's own flag builders
 * and errors (its public `parser`, `flags`, `args` and `errors` entries), so a direct
 * run parses, refuses and exits exactly as the oclif run does. What it leaves out:
 * `Config.load` (the package, the manifest, plugins, hooks), help and the version
 * banner, which were most of a command's start (~50 ms, issue 19).
 *
 * Only src/cli/direct.ts runs a command this way, and only when oclif would run the
 * same command with the same argv (no --help, a known command id; see there). A
 * command that needs `this.config` (only `helix help`) is never run directly.
 */
import {exit as exitWith} from '@oclif/core/errors'
import {flush} from '@oclif/core/flush'
import {parse} from '@oclif/core/parser'
import {exitCodeOf} from './exit-code.js'

export * as Args from '@oclif/core/args'
export * as Flags from '@oclif/core/flags'

// What oclif's own modules do as they load, kept here so a direct run behaves the same:
// a reader that goes away (`| head`) ends the output quietly instead of crashing the
// command with an unhandled EPIPE (oclif's command module), and a current directory that
// no longer exists gets oclif's warning line (its index module).
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error?.code === 'EPIPE') return
  throw error
})
try {
  process.cwd()
} catch (error) {
  if ((error as NodeJS.ErrnoException).code === 'ENOENT') process.stderr.write('WARNING: current directory does not exist\n')
}

// oclif's parser types are generic over the command's flag table; the direct
// runner hands it the command's own static tables, as oclif's Command.parse does.
type ParseInput = Parameters<typeof parse>[1]
type CommandStatics = {flags?: ParseInput['flags']; baseFlags?: ParseInput['flags']; args?: ParseInput['args']; strict?: boolean}

/** oclif's Command, as far as a helix command uses it: argv, parse, exit, catch. */
export abstract class Command {
  // what a run reads of the class (a command's description, usage and examples are
  // for help, which only oclif shows)
  static id: string | undefined
  static strict = true
  static args: ParseInput['args'] = {}
  static flags: ParseInput['flags'] = {}
  static baseFlags: ParseInput['flags'] = {}

  id: string | undefined
  /** nothing of oclif's Config is loaded; a command that reads it is a bug here */
  readonly config: never = undefined as never

  constructor(public argv: string[]) {
    this.id = (this.constructor as typeof Command).id
  }

  abstract run(): Promise<unknown>

  /** oclif's Command.run: make one, run it, hand a failure to its catch. */
  static async run(argv: string[]): Promise<unknown> {
    // `this` is the command's own (concrete) class
    const cmd = new (this as unknown as new (argv: string[]) => Command)(argv)
    let failure: unknown
    try {
      await cmd.init()
      return await cmd.run()
    } catch (error) {
      failure = error
      await cmd.catch(error as Error)
    } finally {
      await cmd.finally(failure)
    }
    return undefined
  }

  /**
   * The whole of a direct run, as dist/cli/oclif-entry.js ends an oclif one: run, wait
   * for stdout, and on `this.exit(n)` (every helix error ends so) exit with n at once.
   */
  static async main(argv: string[]): Promise<void> {
    try {
      await this.run(argv)
      await flush()
    } catch (error) {
      const code = exitCodeOf(error)
      if (code !== undefined) process.exit(code)
      const {handle} = await import('@oclif/core/handle')
      await handle(error as Error)
    }
  }

  async init(): Promise<void> {}

  async finally(_error: unknown): Promise<void> {}

  /** oclif's default: rethrow (HelixCommand turns every failure into one line and an exit) */
  async catch(error: Error): Promise<unknown> {
    throw error
  }

  /** oclif's Command.parse, without the preparse hook (helix has none) or the JSON flag (helix declares its own) */
  async parse(options?: CommandStatics, argv: string[] = this.argv): Promise<Awaited<ReturnType<typeof parse>>> {
    const o = options ?? (this.constructor as CommandStatics)
    this.argv = [...argv]
    return parse(argv, {context: this, ...o, flags: {...o.baseFlags, ...o.flags}} as unknown as ParseInput)
  }

  /** throws oclif's ExitError, as oclif's does */
  exit(code = 0): never {
    return exitWith(code)
  }
}
