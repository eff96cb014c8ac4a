/**
 * A startup fast path for `helix status` / `helix status --json` that bypasses
 * oclif (which alone costs ~2.7× a bare `node -e 0`). Only these exact argv
 * shapes are handled; anything else (--watch, --help, unknown flags) returns
 * false and the caller falls through to oclif, which owns parsing and errors.
 *
 * Intended use in bin/run.js (before oclif is imported, so oclif must be loaded
 * with a dynamic import there):
 *
 *   const argv = process.argv.slice(2)
 *   if (argv[0] === 'status') {
 *     const {statusFastPath} = await import('../dist/status/fast-path.js')
 *     if (await statusFastPath(argv)) process.exit(process.exitCode ?? 0)
 *   }
 *   const {execute} = await import('@oclif/core')
 *   await execute({dir: import.meta.url})
 */
import {HelixError, helixMessage} from '../util/errors.js'
import {statusOutput} from './report.js'

export function isFastStatusArgv(argv: readonly string[]): boolean {
  return argv[0] === 'status' && (argv.length === 1 || (argv.length === 2 && argv[1] === '--json'))
}

/** Runs `helix status [--json]` without oclif; false when argv is not a shape it handles. */
export async function statusFastPath(argv: readonly string[]): Promise<boolean> {
  if (!isFastStatusArgv(argv)) return false
  try {
    const tty = process.stdout.isTTY
    const text = await statusOutput({json: argv[1] === '--json', width: tty ? process.stdout.columns : undefined, height: tty ? process.stdout.rows : undefined})
    process.stdout.write(text)
  } catch (error) {
    const e = error as Error
    process.stderr.write(helixMessage(String(e?.message ?? e).split('\n')[0]) + '\n')
    process.exitCode = error instanceof HelixError ? error.exitCode : 1
  }
  return true
}
