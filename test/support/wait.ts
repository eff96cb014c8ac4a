// The one way a test waits for something another process (or the loop) does: poll a
// condition with a short interval and a generous deadline (a loaded 2-core machine is
// slow, never wrong). No fixed sleeps: a test that needs an order uses a latch (latch.ts).

export interface WaitOptions {
  /** give up after this long (default 10 s); the wait then throws, failing the test */
  timeoutMs?: number
  /** poll interval (default 20 ms) */
  intervalMs?: number
  /** what is awaited, for the timeout message */
  what?: string
}

/**
 * Poll intervals for a condition that starts a process each time it is asked. The default
 * 20 ms suits a condition that reads a file or a variable; one that runs git (a few ms of CPU
 * per start, from a large vitest worker) or a node script (~40 ms of CPU each: the gh stand-in)
 * every 20 ms is a busy loop of process starts for as long as the wait lasts.
 */
export const GIT_POLL_MS = 250
export const NODE_POLL_MS = 500

/**
 * Resolve once `cond()` is truthy, with the milliseconds it took; throw
 * `timed out after N ms waiting for <what>` when the deadline passes first.
 * A number instead of options is the timeout. An exception `cond` throws propagates.
 */
export async function waitFor(cond: () => unknown, opts: WaitOptions | number = {}): Promise<number> {
  const o = typeof opts === 'number' ? {timeoutMs: opts} : opts
  const timeout = o.timeoutMs ?? 10_000
  const interval = o.intervalMs ?? 20
  const start = Date.now()
  while (!(await cond())) {
    if (Date.now() - start > timeout) throw new Error(`timed out after ${timeout} ms waiting for ${o.what ?? 'the condition'}`)
    await new Promise((r) => setTimeout(r, interval))
  }
  return Date.now() - start
}
