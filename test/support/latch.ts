// Ordering events in tests of concurrent code (the --workers loop with fakes) without
// counting timer ticks: a latch opens once, and everything awaiting it runs after.

export interface Latch {
  readonly isOpen: boolean
  open(): void
  /** resolves once the latch is open (at once when it already is) */
  wait(): Promise<void>
}

export function latch(): Latch {
  let release!: () => void
  const opened = new Promise<void>((r) => (release = r))
  let isOpen = false
  return {
    get isOpen() {
      return isOpen
    },
    open() {
      isOpen = true
      release()
    },
    wait: () => opened,
  }
}

/**
 * A barrier for `n` parties: each call waits until all `n` have arrived, so that
 * many attempts are provably in flight at once.
 */
export function barrier(n: number): () => Promise<void> {
  const all = latch()
  let arrived = 0
  return async () => {
    if (++arrived >= n) all.open()
    await all.wait()
  }
}

/**
 * Resolves once every promise reaction already queued has run (one macrotask turn:
 * microtasks always drain first). Code driven only by fakes, which never touch a
 * timer or I/O, has then gone as far as it can: e.g. the scheduler has decided
 * what to do after a landing.
 */
export function settled(): Promise<void> {
  return new Promise((r) => setImmediate(r))
}

/**
 * A list of event names with waiters: `await events.seen('landed a')` resolves
 * once that event has been recorded (at once if it already was).
 */
export class EventLog {
  readonly list: string[] = []
  private waiters: Array<{name: string; latch: Latch}> = []
  push(name: string): void {
    this.list.push(name)
    for (const w of this.waiters) if (w.name === name) w.latch.open()
    this.waiters = this.waiters.filter((w) => !w.latch.isOpen)
  }
  seen(name: string): Promise<void> {
    if (this.list.includes(name)) return Promise.resolve()
    const l = latch()
    this.waiters.push({name, latch: l})
    return l.wait()
  }
}
