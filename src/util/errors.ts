/**
 * The one error type the domain throws. Commands print `message` as a single
 * line on stderr and exit with `exitCode` (SPEC section 10).
 */
export class HelixError extends Error {
  readonly exitCode: number

  constructor(message: string, exitCode = 1) {
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
  REVIEW_FINDINGS: 10,
  SIGINT: 130,
  SIGTERM: 143,
} as const

/** Prefix a message with `helix: ` unless it already carries it. */
export function helixMessage(message: string): string {
  return message.startsWith('helix') ? message : `helix: ${message}`
}
