/**
 * A reader that goes away (`helix --help | head -1`, `helix tracker list --json | head
 * -c1`) is not an error: helix stops writing to it and ends as the command would have
 * ended, 0 for a command that succeeded, with nothing on stderr. Both ways into a
 * command (src/cli/fast-path.ts, src/cli/oclif-entry.ts) use this.
 */

let broken = false

/** True once stdout's reader has gone away. */
export function stdoutBroken(): boolean {
  return broken
}

/** Note a failed write to stdout: EPIPE means the reader is gone; anything else is rethrown. */
export function onStdoutError(error: NodeJS.ErrnoException): void {
  if (error?.code !== 'EPIPE') throw error
  broken = true
}

/** Install the EPIPE handler on process.stdout (creating the stream, so only where it is written). */
export function quietBrokenPipe(): void {
  process.stdout.on('error', onStdoutError)
}

/**
 * Resolves when what was written to stdout has gone out, or at once when the reader
 * is gone (oclif's `flush` waits for a 'drain' that a broken pipe never emits, and the
 * process then ended with 13, an unsettled top-level await).
 */
export async function flushStdout(): Promise<void> {
  const out = process.stdout
  if (broken || out.destroyed || !out.writableNeedDrain) return
  await new Promise<void>((resolve) => {
    const done = () => {
      out.off('drain', done)
      out.off('close', done)
      out.off('error', done)
      resolve()
    }
    out.once('drain', done)
    out.once('close', done)
    out.once('error', done)
  })
}
