/**
 * The one error type the domain throws. Commands print `message` as a single
 * line on stderr and exit with `exitCode` (SPEC section 10).
 */
export class HelixError extends Error {
  readonly exitCode: number

  constructor(message: string, exitCode: number = EXIT.ERROR) {
    super(message)
    this.name = 'HelixError'
    this.exitCode = exitCode
  }
}

export const EXIT = {
  OK: 0,
  ERROR: 1,
  BUSY: 2,
  CLAIM: 3,
  /** agent unavailable, or a quota reset beyond --max-quota-wait (SPEC 14, 17) */
  AGENT_UNAVAILABLE: 4,
  REVIEW_FINDINGS: 10,
  SIGHUP: 129,
  SIGINT: 130,
  SIGTERM: 143,
} as const

/**
 * A claim conflict at the tracker boundary (exit 3, SPEC 13.3): the bead is
 * claimed by someone else, not claimable (closed, waiting on dependencies), or
 * the caller's claim on it was lost. Callers that treat a conflict as an
 * expected outcome (the loop skips the bead) test `instanceof`, not the code.
 */
export class ClaimConflictError extends HelixError {
  constructor(message: string) {
    super(message, EXIT.CLAIM)
    this.name = 'ClaimConflictError'
  }
}

/**
 * Prefix a message with `helix: ` unless it already carries it (`helix: …`, or
 * a command-named `helix run: …`, `helix tracker show: …`). Only those exact forms count: a message that
 * merely starts with a bead id such as `helix-0a1b2c3d` (the real helix tracker's
 * prefix) still gets the prefix.
 */
export function helixMessage(message: string): string {
  return /^helix(?: [a-z]+){0,3}:/.test(message) ? message : `helix: ${message}`
}

/** The message of anything thrown, without casts at every call site. */
export function errorMessage(e: unknown): string {
  if (e instanceof Error) return e.message
  if (typeof e === 'string') return e
  try {
    return String(e)
  } catch {
    // a thrown object whose toString throws: there is no message to give
    return 'unknown error'
  }
}

/** what a file system error means, in words (`ENOENT: no such file…, open '/x'` → `no such file or directory`) */
const FS_WORDS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EEXIST: 'it already exists',
}

/** A file system error as plain words; anything else as its message. */
export function fsErrorWords(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | null)?.code
  return (typeof code === 'string' && FS_WORDS[code]) || errorMessage(e)
}

/**
 * Words given to a command that takes no (more) arguments (SPEC 22.2): `helix run:
 * unexpected argument 'extra'`, not "unknown command". `command` is oclif's id
 * (`tracker:show`) or the spaced name; the words are untrusted (the line is sanitized
 * where it is printed, by reportError).
 */
export function unexpectedArgument(command: string | undefined, words: readonly string[]): HelixError {
  const name = (command ?? '').split(':').join(' ')
  return new HelixError(`helix${name ? ` ${name}` : ''}: unexpected argument${words.length === 1 ? '' : 's'} ${words.map((w) => `'${w}'`).join(', ')}`, EXIT.ERROR)
}
