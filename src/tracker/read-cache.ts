/**
 * Lock-free reads with a per-process cache: readTracker keeps the
 * last parse per file, keyed on the file's identity (dev, ino, size, mtime in
 * ns), which is checked with a stat on EVERY read: "re-read before every
 * decision" still holds, but an unchanged file is not parsed again, and a
 * changed one is parsed incrementally (incremental.ts). A snapshot from
 * readTracker is shared: treat it as read-only (mutations get a copy-on-write
 * view of it, cow.ts).
 */
import type {TrackerSnapshot} from './types.js'
import {currentIdentity, readTrackerBytes, type FileIdentity} from './read-file.js'
import {parseTrackerAfter} from './incremental.js'
import {emptySnapshot} from './lines.js'

/**
 * per file: the identity last seen and its parse. The cached snapshot is never
 * modified: readTracker hands it out read-only, mutations work on a copy-on-write view.
 */
const cache = new Map<string, {id: FileIdentity; snap: TrackerSnapshot}>()

/** Forget cached parses (tests, benchmarks). */
export function clearTrackerCache(): void {
  cache.clear()
}

export function cachedParse(file: string): {id: FileIdentity; snap: TrackerSnapshot} | undefined {
  return cache.get(file)
}

export function rememberParse(file: string, id: FileIdentity | null, snap: TrackerSnapshot): void {
  if (id === null) cache.delete(file)
  else cache.set(file, {id, snap})
}

/**
 * Read and parse the tracker. A missing file is an empty tracker. No lock.
 * Stats the file on every call; parses only when its identity changed.
 */
export async function readTracker(file: string): Promise<TrackerSnapshot> {
  const hit = cache.get(file)
  const r = readTrackerBytes(file, hit?.id)
  if (r === null) {
    cache.delete(file)
    return emptySnapshot()
  }
  if (r.buf === null && hit) return hit.snap
  // the lines that did not change keep the previous parse of their bytes
  const snap = parseTrackerAfter(r.buf ?? Buffer.alloc(0), file, hit?.snap)
  cache.set(file, {id: r.id, snap})
  return snap
}

/** Raw bytes of the tracker (empty when missing). Refuses non-regular files. */
export async function readTrackerRaw(file: string): Promise<Buffer> {
  return readTrackerBytes(file)?.buf ?? Buffer.alloc(0)
}

/**
 * Keep a write's own result in the read cache, under the identity of the file
 * just written (still under the lock): the next read neither reads nor parses
 * the file again; `snap` is exactly what a fresh parse of `bytes` yields.
 */
export function rememberWrite(file: string, bytes: {length: number}, snap: TrackerSnapshot | null): void {
  const id = currentIdentity(file)
  if (snap === null || id === null || id.size !== BigInt(bytes.length)) {
    cache.delete(file)
    return
  }
  cache.set(file, {id, snap})
}
