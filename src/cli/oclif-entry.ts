/**
 * bin/run.js's way into oclif. The build bundles this file with every command
 * (scripts/bundle.mjs), so what it uses comes from the same copy of @oclif/core that
 * the bundled commands extend.
 */
import {run} from '@oclif/core/run'
import {reportError} from '../util/report-error.js'
import {flushStdout, quietBrokenPipe} from './pipe.js'

/**
 * oclif's `execute`, with helix's way out: a command that ended by `this.exit(n)`
 * (every helix failure ends so: HelixCommand reports it, then exits) exits with n at
 * once; anything oclif itself throws outside a command (loading its config, a hook)
 * goes through the same `reportError` as a command's failure, instead of oclif's
 * `handle` (a multi-line banner, and packages a start otherwise never loads).
 */
export async function execute(opts: {dir: string}): Promise<void> {
  quietBrokenPipe()
  try {
    await run(process.argv.slice(2), opts.dir)
    await flushStdout()
  } catch (error) {
    const code = oclifExitCode(error)
    process.exit(code ?? reportError(error))
  }
}

/** n for oclif's ExitError from `this.exit(n)`; undefined for any other error. */
export function oclifExitCode(error: unknown): number | undefined {
  const e = error as {code?: unknown; oclif?: {exit?: unknown}} | null | undefined
  if (e?.code !== 'EEXIT') return undefined
  return typeof e.oclif?.exit === 'number' ? e.oclif.exit : 1
}
