/**
 * How both ways into a command end one that called `this.exit(n)` (every helix error
 * ends so: HelixCommand prints its one line, then exits): oclif's ExitError carries n.
 * Used by src/cli/oclif-entry.ts and src/cli/direct-core.ts, which then exit with it at
 * once instead of handing the error to oclif's `handle`.
 */

/** n for an ExitError from `this.exit(n)`; undefined for any other error (oclif's SIGINT exit included). */
export function exitCodeOf(error: unknown): number | undefined {
  const e = error as {code?: unknown; message?: unknown; oclif?: {exit?: unknown}} | null | undefined
  if (e?.code !== 'EEXIT' || e.message === 'SIGINT') return undefined
  return typeof e.oclif?.exit === 'number' ? e.oclif.exit : 1
}
