/**
 * The one abortable sleep: resolves after `ms`, or at once when `signal`
 * aborts (or already has). Never rejects, so a loop can `await abortableSleep(…)` and
 * then check `signal.aborted`. The timer and the listener are removed either way.
 * A zero (or negative, or NaN) wait still yields to the event loop once, so a
 * `while (!signal.aborted)` loop sleeping 0 cannot starve the handler that aborts it.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    if (!(ms > 0)) {
      setImmediate(resolve)
      return
    }
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, {once: true})
  })
}
