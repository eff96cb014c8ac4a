/**
 * Where each bead of a snapshot sits in the bytes it was parsed from (issue
 * 11): every non-blank line, in file order, duplicates included. Lets the next
 * parse of a changed file reuse the beads of the lines that did not change
 * (incremental.ts). Positions are in the bytes of the whole file (`parts`); a
 * bead's own RawLine may point into an older buffer with the same line bytes.
 */
import type {Bead, TrackerSnapshot} from './types.js'

export interface LineIndex {
  /** the whole file's bytes, as the buffers that make it up back to back (a write's parts, or the one buffer read) */
  parts: Buffer[]
  /** their total length */
  length: number
  starts: number[]
  /** offset of the line's `\n` (or the end of the buffer) */
  ends: number[]
  /** 1-based physical line number */
  nos: number[]
  beads: Bead[]
}

const INDEX = new WeakMap<TrackerSnapshot, LineIndex>()

export function indexOf(snap: TrackerSnapshot): LineIndex | undefined {
  return INDEX.get(snap)
}

export function newIndex(buf: Buffer): LineIndex {
  return {parts: [buf], length: buf.length, starts: [], ends: [], nos: [], beads: []}
}

export function indexLine(index: LineIndex, start: number, end: number, n: number, b: Bead): void {
  index.starts.push(start)
  index.ends.push(end)
  index.nos.push(n)
  index.beads.push(b)
}

export function withIndex(snap: TrackerSnapshot, index: LineIndex | null): TrackerSnapshot {
  if (index !== null) INDEX.set(snap, index)
  return snap
}
