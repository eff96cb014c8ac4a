/**
 * Bead keys come from the file, so any of them may be `__proto__`: JSON.parse makes
 * it an own data property, but `o[k] = v` with that key sets the object's prototype
 * instead (the value vanishes from Object.keys and from the encoded line), and
 * `o[k]` on an object without it reads Object.prototype. Copies and merges of
 * records read and write keys through these two.
 */

/** `o[k]` when `o` has its own `k`, else undefined (never an inherited value). */
export function getOwn(o: object, k: string): unknown {
  return Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined
}

/** Make `k` an own, enumerable data property of `o` holding `v`, whatever `k` is. */
export function setOwn(o: object, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, {value: v, enumerable: true, writable: true, configurable: true})
  else (o as Record<string, unknown>)[k] = v
}
