import {describe, expect, it} from 'vitest'
import {abortableSleep} from '../../src/util/abort.js'

describe('abortableSleep', () => {
  it('waits the time when nothing aborts', async () => {
    const t0 = performance.now()
    await abortableSleep(40)
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35)
  })
  it('resolves at once on abort and leaves no listener behind', async () => {
    const ac = new AbortController()
    let removed = 0
    const remove = ac.signal.removeEventListener.bind(ac.signal)
    ac.signal.removeEventListener = ((...a: Parameters<typeof remove>) => (removed++, remove(...a))) as typeof remove
    const t0 = performance.now()
    const p = abortableSleep(60_000, ac.signal)
    ac.abort()
    await p
    expect(performance.now() - t0).toBeLessThan(1000)
    expect(removed).toBe(1)
  })
  it('a zero wait still yields to the event loop (a loop sleeping 0 cannot starve a signal handler)', async () => {
    let ran = false
    setImmediate(() => (ran = true))
    await abortableSleep(0)
    expect(ran).toBe(true)
  })
  it('an already aborted signal, zero, negative or NaN: no wait', async () => {
    const ac = new AbortController()
    ac.abort()
    const t0 = performance.now()
    await Promise.all([abortableSleep(60_000, ac.signal), abortableSleep(0), abortableSleep(-5), abortableSleep(Number.NaN)])
    expect(performance.now() - t0).toBeLessThan(1000)
  })
})
