/**
 * bin/run.js's way into oclif. The build bundles this file with every command
 * (scripts/bundle.mjs), so what it uses comes from the same copy of @oclif/core that
 * the bundled commands extend.
 */
import {flush, handle, run} from '@oclif/core'
import {exitCodeOf} from './exit-code.js'

/**
 * oclif's `execute`, except for the way out of a command that ended by `this.exit(n)`
 * (every helix error ends so: HelixCommand prints its one line, then exits). oclif's
 * `handle` exits with the same code but first pretty-prints the error and cleans its
 * stack, which it then does not print; that loads packages a start otherwise never
 * needs (~8 ms of every failing command).
 */
export async function execute(opts: {dir: string}): Promise<void> {
  try {
    await run(process.argv.slice(2), opts.dir)
    await flush()
  } catch (error) {
    const code = exitCodeOf(error)
    if (code !== undefined) process.exit(code)
    await handle(error as Error)
  }
}
