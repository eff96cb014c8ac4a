/**
 * The one abortable sleep (issue 13): resolves after `ms`, or at once when `signal`
 * aborts (or already has). Never rejects, so a loop can `await abortableSleep(…)` and
 * then check `signal.aborted`. The timer and the listener are removed either way.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || !(ms > 0)) return resolve()
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    signal?.addEventListener('abort', done, {once: true})
  })
}
