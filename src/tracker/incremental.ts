/**
 * Incremental parse: after another writer changed the file, only
 * the changed region is parsed; the lines before and after it keep the beads
 * of the previous parse (same bytes, same parse). The result equals a full
 * parse (test/tracker/incremental.test.ts).
 */
import type {Bead, TrackerSnapshot} from './types.js'
import {addBead, eachLine, emptySnapshot, finish, hasBom, malformedError, parseRawLine} from './lines.js'
import {indexLine, indexOf, newIndex, withIndex} from './line-index.js'
import {parseTracker} from './decode.js'

const BLOCK = 4096

/** Length of the common prefix of a[a0, a0+n) and b[b0, b0+n) (native compares of blocks, then bytes). */
function prefixOf(a: Buffer, a0: number, b: Buffer, b0: number, n: number): number {
  let i = 0
  while (i + BLOCK <= n && a.compare(b, b0 + i, b0 + i + BLOCK, a0 + i, a0 + i + BLOCK) === 0) i += BLOCK
  while (i < n && a[a0 + i] === b[b0 + i]) i++
  return i
}

/** Length of the common suffix of a[aEnd-n, aEnd) and b[bEnd-n, bEnd). */
function suffixOf(a: Buffer, aEnd: number, b: Buffer, bEnd: number, n: number): number {
  let i = 0
  while (i + BLOCK <= n && a.compare(b, bEnd - i - BLOCK, bEnd - i, aEnd - i - BLOCK, aEnd - i) === 0) i += BLOCK
  while (i < n && a[aEnd - 1 - i] === b[bEnd - 1 - i]) i++
  return i
}

/** Length of the common prefix of the bytes `parts` make up (back to back) and b. */
function commonPrefix(parts: Buffer[], b: Buffer): number {
  let off = 0
  for (const p of parts) {
    const n = Math.min(p.length, b.length - off)
    const k = prefixOf(p, 0, b, off, n)
    off += k
    if (k < p.length) break
  }
  return off
}

/** Length of the common suffix of the bytes `parts` make up and b, at most `max`. */
function commonSuffix(parts: Buffer[], b: Buffer, max: number): number {
  let k = 0
  for (let j = parts.length - 1; j >= 0 && k < max; j--) {
    const p = parts[j]
    const n = Math.min(p.length, max - k)
    const m = suffixOf(p, p.length, b, b.length - k, n)
    k += m
    if (m < p.length) break
  }
  return k
}

/**
 * parseTracker(buf), reusing the beads of `prev` (a snapshot this module made,
 * never modified) for the lines before and after the changed region: those
 * lines have the very same bytes, so their parse is the same. The result is
 * what parseTracker(buf) returns: same beads in the same order, same raw
 * lines, same duplicates, same error for a malformed line.
 */
export function parseTrackerAfter(buf: Buffer, file: string, prev: TrackerSnapshot | undefined): TrackerSnapshot {
  const old = prev === undefined ? undefined : indexOf(prev)
  if (old === undefined || hasBom(buf)) return parseTracker(buf, file)
  const a = old
  const p = commonPrefix(a.parts, buf)
  const sfx = commonSuffix(a.parts, buf, Math.min(a.length, buf.length) - p)
  const n0 = old.starts.length
  // old lines wholly inside the common prefix, `\n` included
  let head = 0
  while (head < n0 && old.ends[head] < p) head++
  // old lines wholly inside the common suffix, starting right after a `\n` in both files
  const shift = buf.length - a.length
  let tail = n0
  while (tail > head && old.starts[tail - 1] >= a.length - sfx && (old.starts[tail - 1] + shift === 0 || buf[old.starts[tail - 1] + shift - 1] === 0x0a)) tail--
  const midStart = head > 0 ? old.ends[head - 1] + 1 : 0
  const midEnd = tail < n0 ? old.starts[tail] + shift : buf.length
  if (midStart > midEnd) return parseTracker(buf, file)
  const index = newIndex(buf)
  for (let i = 0; i < head; i++) indexLine(index, old.starts[i], old.ends[i], old.nos[i], old.beads[i])
  const firstLine = head > 0 ? old.nos[head - 1] + 1 : 1
  // a copy of the changed region only: the new beads' lines point into it, so a
  // long-lived process does not keep one whole read alive per change it saw
  const mid = Buffer.from(buf.subarray(midStart, midEnd))
  const midBeads: Bead[] = []
  const nextLine = eachLine(mid, 0, mid.length, firstLine, midStart === 0, (start, end, n) => {
    const r = parseRawLine(mid, start, end)
    if (typeof r === 'string') throw malformedError(file, n, r)
    midBeads.push(r)
    indexLine(index, start + midStart, end + midStart, n, r)
  })
  // the middle ends right before a line start, so it counted every line before the tail
  const lineShift = tail < n0 ? nextLine - old.nos[tail] : 0
  for (let i = tail; i < n0; i++) indexLine(index, old.starts[i] + shift, old.ends[i] + shift, old.nos[i] + lineShift, old.beads[i])
  return withIndex(snapshotAfter(prev!, old.beads, head, tail, midBeads), index)
}

/**
 * The snapshot of old lines [0, head) + midBeads + old lines [tail, n0). When the
 * changed lines are the same beads (same ids, in order) in a file without duplicate
 * ids, the previous id map is copied and the changed beads put in, not rebuilt.
 */
function snapshotAfter(prev: TrackerSnapshot, lines: Bead[], head: number, tail: number, midBeads: Bead[]): TrackerSnapshot {
  let same = prev.duplicateIds.length === 0 && lines.length === prev.beads.length && midBeads.length === tail - head
  for (let k = 0; k < midBeads.length && same; k++) same = midBeads[k].id === lines[head + k].id
  if (same) {
    const byId = new Map(prev.byId)
    const beads = prev.beads.slice()
    for (let k = 0; k < midBeads.length; k++) {
      byId.set(midBeads[k].id, midBeads[k])
      beads[head + k] = midBeads[k]
    }
    return {beads, byId, duplicateIds: []}
  }
  const snap = emptySnapshot()
  const dupes = new Set<string>()
  for (let i = 0; i < head; i++) addBead(snap, lines[i], dupes)
  for (const b of midBeads) addBead(snap, b, dupes)
  for (let i = tail; i < lines.length; i++) addBead(snap, lines[i], dupes)
  return finish(snap, dupes)
}
