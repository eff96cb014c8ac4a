/**
 * Copy-on-write snapshots for mutations: a mutation gets a view of
 * the cached parse in which a bead is copied only when the mutation asks for
 * it by id (`snap.byId.get(id)`). Nothing else is copied, so a one-bead
 * change costs one bead, not the tracker. The cached parse is never modified.
 *
 * The contract for a mutation function: change only beads obtained from
 * `snap.byId.get(id)`. The beads listed in `snap.beads` that were never asked
 * for by id are the cached objects themselves and are written back as their
 * original bytes without being compared.
 */
import type {Bead, TrackerSnapshot} from './types.js'
import {attachRaw, rawOf, RawLine} from './lines.js'
import {setOwn} from './own-keys.js'

/** A deep copy of a JSON value (plain objects, arrays, primitives). */
function cloneJson<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(cloneJson) as T
  const o: Record<string, unknown> = {}
  for (const k of Object.keys(v)) setOwn(o, k, cloneJson((v as Record<string, unknown>)[k]))
  return o as T
}

/** Same JSON value: same keys (any order) and equal values at every depth, numbers by Object.is. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || Object.is(a, b)
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ka = Object.keys(a)
  if (ka.length !== Object.keys(b).length) return false
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false
  }
  return true
}

/** A private, mutable deep copy of one bead that remembers its line and the untouched parse it came from. */
export function copyBead(b: Bead): Bead {
  // spread copies the own enumerable keys in order (not the raw line symbol); nested values are copied too
  const c: Bead = {...b}
  for (const k in c) {
    const v = c[k]
    if (v !== null && typeof v === 'object') setOwn(c, k, cloneJson(v))
  }
  const raw = rawOf(b)
  if (raw) {
    const copy = new RawLine(raw.buf, raw.start, raw.end)
    copy.canon = raw.canon
    copy.pristine = raw.pristine ?? b
    attachRaw(c, copy)
  }
  return c
}

const UNWRAP = Symbol('helix.tracker.cowTarget')

/**
 * The copies of one copy-on-write view, made on demand, and read-through
 * stand-ins (proxies) for the beads nobody has asked for yet: reading a
 * primitive field of a stand-in reads the cached bead; writing any field, or
 * reading an object-valued one (which the caller might change in place),
 * first makes the private copy and then acts on it.
 */
class Copies {
  readonly copies = new Map<string, Bead>()
  private readonly proxies = new Map<string, Bead>()
  constructor(readonly base: ReadonlyMap<string, Bead>) {}

  copy(id: string): Bead | undefined {
    const c = this.copies.get(id)
    if (c !== undefined) return c
    const b = this.base.get(id)
    if (b === undefined) return undefined
    const made = copyBead(b)
    this.copies.set(id, made)
    return made
  }

  /** the copy when there is one, else a stand-in for the base bead */
  view(b: Bead): Bead {
    const c = this.copies.get(b.id)
    if (c !== undefined) return c
    let p = this.proxies.get(b.id)
    if (p === undefined) {
      p = this.standIn(b)
      this.proxies.set(b.id, p)
    }
    return p
  }

  /** one handler for every stand-in of this view: the target is the cached bead */
  private readonly handler: ProxyHandler<Bead> = {
    get: (t, k) => {
      const c = this.copies.get(t.id)
      if (k === UNWRAP) return c ?? t
      if (c !== undefined) return Reflect.get(c, k)
      const v = Reflect.get(t, k)
      return v !== null && typeof v === 'object' && typeof k === 'string' ? Reflect.get(this.copy(t.id)!, k) : v
    },
    set: (t, k, v) => Reflect.set(this.copy(t.id)!, k, v),
    deleteProperty: (t, k) => Reflect.deleteProperty(this.copy(t.id)!, k),
    defineProperty: (t, k, d) => Reflect.defineProperty(this.copy(t.id)!, k, d),
    has: (t, k) => Reflect.has(this.copies.get(t.id) ?? t, k),
    ownKeys: (t) => Reflect.ownKeys(this.copies.get(t.id) ?? t),
    getOwnPropertyDescriptor: (t, k) => {
      const d = Reflect.getOwnPropertyDescriptor(this.copies.get(t.id) ?? t, k)
      // values are read through `get`, so an object value is copied before anyone can change it
      return d && 'value' in d && d.value !== null && typeof d.value === 'object' && typeof k === 'string' ? Reflect.getOwnPropertyDescriptor(this.copy(t.id)!, k) : d
    },
  }

  private standIn(b: Bead): Bead {
    return new Proxy(b, this.handler)
  }
}

/** What a bead in a mutation's result stands for: the copy or cached bead behind a stand-in, else itself. */
function unwrap(b: Bead): Bead {
  return ((b as unknown as Record<symbol, Bead | undefined>)[UNWRAP] ?? b) as Bead
}

/** The byId of a copy-on-write snapshot: `has` sees the base, `get` hands out (and keeps) a private copy. */
class CowIndex extends Map<string, Bead> {
  constructor(private readonly c: Copies) {
    super()
  }
  override get(id: string): Bead | undefined {
    return this.c.copy(id)
  }
  override has(id: string): boolean {
    return this.c.base.has(id)
  }
  override get size(): number {
    return this.c.base.size
  }
  override set(): this {
    throw new Error('a tracker snapshot is not added to through byId; return the new bead in the list')
  }
  override delete(): boolean {
    throw new Error('a tracker snapshot is not changed through byId; leave the bead out of the returned list')
  }
  override clear(): void {
    throw new Error('a tracker snapshot is not changed through byId')
  }
  override *keys(): MapIterator<string> {
    yield* this.c.base.keys()
  }
  override *values(): MapIterator<Bead> {
    for (const b of this.c.base.values()) yield this.c.view(b)
  }
  override *entries(): MapIterator<[string, Bead]> {
    for (const b of this.c.base.values()) yield [b.id, this.c.view(b)]
  }
  override [Symbol.iterator](): MapIterator<[string, Bead]> {
    return this.entries()
  }
  override forEach(fn: (v: Bead, k: string, m: Map<string, Bead>) => void): void {
    for (const [k, v] of this.entries()) fn(v, k, this)
  }
}

export interface CowSnapshot extends TrackerSnapshot {
  /**
   * The beads to encode for a mutation's result: stand-ins resolved to the
   * bead behind them, and for each whether it is an untouched cached bead
   * (written back as its original bytes without a comparison).
   */
  resolve(beads: Bead[]): {beads: Bead[]; untouched: (b: Bead) => boolean}
}

/** A copy-on-write view of `base` (see the file comment). */
export function cowSnapshot(base: TrackerSnapshot): CowSnapshot {
  const c = new Copies(base.byId)
  const byId = new CowIndex(c)
  let list: Bead[] | null = null
  return {
    byId,
    duplicateIds: [...base.duplicateIds],
    // file order; stand-ins until a bead is copied
    get beads(): Bead[] {
      list ??= base.beads.map((b) => c.view(b))
      return list
    },
    set beads(v: Bead[]) {
      list = v
    },
    resolve: (beads) => ({
      beads: beads.map(unwrap),
      untouched: (b) => base.byId.get(b.id) === b && !c.copies.has(b.id),
    }),
  }
}
