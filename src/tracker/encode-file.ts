/**
 * Writing the whole file (SPEC 2.1, 13.2): records sorted by id, one line
 * each. A bead that did not change is written back as its original bytes
 * (whatever their key order, spacing or encoding); a changed bead is encoded
 * canonically, except that every key helix does not interpret and did not
 * change keeps its original JSON text (big integers, `1.0`, `1e2`, `-0`,
 * escapes). Unchanged lines that were consecutive in the buffer they came
 * from are copied as one block, not line by line.
 */
import {INTERPRETED_KEYS} from './fields.js'
import type {Bead, TrackerSnapshot} from './types.js'
import {bytewise, encEntry, encValue, serializeBead, writtenKeys} from './encode.js'
import {topLevelEntries, type RawEntry} from './json-scan.js'
import {addBead, emptySnapshot, finish, parseRawLine, rawOf, type RawLine} from './lines.js'
import {withIndex, type LineIndex} from './line-index.js'
import {sameJson} from './cow.js'

/**
 * The line to write for `b`: its RawLine when the bead is unchanged since it
 * was read, otherwise the canonical text. `untouched`: the caller knows `b` is
 * the very object its line parsed to, never modified (copy-on-write, cow.ts),
 * so nothing needs comparing.
 */
export function encodeBeadLine(b: Bead, untouched = false): string | RawLine {
  const raw = rawOf(b)
  if (raw !== undefined && untouched) return raw
  // a copy still equal to the bead its line parsed to is unchanged
  if (raw?.pristine !== undefined && sameJson(b, raw.pristine)) return raw
  const cur = serializeBead(b)
  if (!raw) return cur
  if (cur === raw.text) return raw
  if (raw.canon === undefined) {
    try {
      raw.canon = serializeBead(JSON.parse(raw.text) as Bead)
    } catch {
      // cannot happen for a line that parsed once; '' never equals a serialization, so the line counts as changed
      raw.canon = ''
    }
  }
  if (cur === raw.canon) return raw
  return serializeKeepingRawValues(b, raw)
}

function serializeKeepingRawValues(b: Bead, raw: RawLine): string {
  return encodeKeepingRawValues(b, [raw])
}

/**
 * The canonical line for `b`, except that each key helix does not interpret
 * keeps its JSON text from the first of `raws` whose line holds the same value
 * under that key. The merge driver passes both sides' lines: a value that came
 * from theirs keeps theirs' text (`12345678901234567890`, `1.0`), not a re-encoding
 * of the parsed number.
 */
export function encodeKeepingRawValues(b: Bead, raws: ReadonlyArray<RawLine | undefined>): string {
  const maps: Array<Map<string, RawEntry>> = []
  for (const raw of raws) {
    const entries = raw === undefined ? null : topLevelEntries(raw.text)
    if (!entries) continue
    const byKey = new Map<string, RawEntry>()
    for (const e of entries) byKey.set(e.key, e) // last one wins, like JSON.parse
    maps.push(byKey)
  }
  if (maps.length === 0) return serializeBead(b)
  const keys = writtenKeys(b)
  let out = '{'
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    const v = b[k]
    if (i) out += ','
    out += INTERPRETED_KEYS.has(k) ? encEntry(k, v) : keptEntry(maps, k, v)
  }
  return out + '}'
}

function keptEntry(maps: ReadonlyArray<Map<string, RawEntry>>, k: string, v: unknown): string {
  for (const byKey of maps) {
    const e = byKey.get(k)
    if (e !== undefined && sameValueText(e.valueRaw, v)) return e.keyRaw + ':' + e.valueRaw
  }
  return encEntry(k, v)
}

/** true when the raw JSON text decodes to the same value as `v` (so `v` is unchanged). */
function sameValueText(valueRaw: string, v: unknown): boolean {
  try {
    return encValue(JSON.parse(valueRaw)) === encValue(v)
  } catch {
    // unparsable raw text: treat the value as changed and write it canonically
    return false
  }
}

const NL = Buffer.from('\n')

/** The whole file as bytes: sorted by id, unchanged lines byte for byte (see encodeBeadLine). */
export function serializeTrackerBuffer(beads: Bead[]): Buffer {
  return serializeTrackerWithSnapshot(beads, {wantSnap: false}).buf
}

/** The bytes of a serialized tracker: the buffers to write back to back (no 5 MB concatenation per write), and one buffer on demand. */
export interface TrackerBytes {
  parts: Buffer[]
  length: number
  /** the parts as one buffer (concatenated on first use) */
  readonly buf: Buffer
}

function trackerBytes(parts: Buffer[]): TrackerBytes {
  let one: Buffer | null = parts.length === 1 ? parts[0] : null
  let length = 0
  for (const p of parts) length += p.length
  return {
    parts,
    length,
    get buf() {
      return (one ??= Buffer.concat(parts, length))
    },
  }
}

/** The whole file as text (tools and tests; helix itself writes bytes). */
export function serializeTracker(beads: Bead[]): string {
  return serializeTrackerBuffer(beads).toString('utf8')
}

function sortedById(beads: Bead[]): Bead[] {
  // a tracker helix wrote is already sorted: check in one pass before sorting
  let sorted = true
  for (let i = 1; i < beads.length && sorted; i++) if (bytewise(beads[i - 1].id, beads[i].id) > 0) sorted = false
  return sorted ? beads : [...beads].sort((a, b) => bytewise(a.id, b.id))
}

export interface EncodeOptions {
  /** also build the snapshot a fresh parse of the bytes yields (default true) */
  wantSnap?: boolean
  /** true for beads known to be untouched parses of their line (copy-on-write) */
  untouched?: (b: Bead) => boolean
  /** the snapshot the beads came from: when the ids are the same, in the same order, its id map is copied, not rebuilt */
  base?: TrackerSnapshot
}

/**
 * The whole file as bytes and, unless `wantSnap` is false, the snapshot a
 * fresh parse of exactly those bytes yields (the writer's read cache
 * needs no re-read and re-parse of its own write). Unchanged beads are the
 * untouched parses they were copied from; changed lines are parsed from their
 * new text. snap is null when a written line would not parse as a bead (a
 * fresh read then reports it).
 */
export function serializeTrackerWithSnapshot(beads: Bead[], opts: EncodeOptions = {}): {bytes: TrackerBytes; buf: Buffer; snap: TrackerSnapshot | null} {
  const wantSnap = opts.wantSnap !== false
  const result = (parts: Buffer[], snap: TrackerSnapshot | null) => {
    const bytes = trackerBytes(parts)
    return {
      bytes,
      get buf() {
        return bytes.buf
      },
      snap,
    }
  }
  if (beads.length === 0) return result([], wantSnap ? emptySnapshot() : null)
  const sorted = sortedById(beads)
  const parts: Buffer[] = []
  let pending: string[] = []
  // the current block of unchanged lines that sit back to back (`\n` between) in one buffer
  let run: {buf: Buffer; start: number; end: number} | null = null
  const closeRun = () => {
    if (run) parts.push(run.buf.subarray(run.start, run.end), NL)
    run = null
  }
  const flush = () => {
    closeRun()
    if (pending.length) parts.push(Buffer.from(pending.join('\n') + '\n', 'utf8'))
    pending = []
  }
  const pushRaw = (raw: RawLine) => {
    if (pending.length) flush()
    if (run && run.buf === raw.buf && raw.start === run.end + 1 && run.buf[run.end] === 0x0a) {
      run.end = raw.end
      return
    }
    closeRun()
    run = {buf: raw.buf, start: raw.start, end: raw.end}
  }
  let parsed = wantSnap
  const starts: number[] = []
  const ends: number[] = []
  const lineBeads: Bead[] = []
  let off = 0
  for (const b of sorted) {
    const untouched = opts.untouched !== undefined && opts.untouched(b)
    const line = encodeBeadLine(b, untouched)
    if (typeof line === 'string') {
      closeRun()
      pending.push(line)
    } else pushRaw(line)
    if (!parsed) continue
    let after: Bead | string
    let len: number
    if (typeof line === 'string') {
      const lineBuf = Buffer.from(line, 'utf8')
      len = lineBuf.length
      after = parseRawLine(lineBuf, 0, len)
    } else {
      len = line.end - line.start
      after = untouched ? b : (line.pristine ?? parseRawLine(line.buf, line.start, line.end))
    }
    starts.push(off)
    ends.push(off + len)
    off += len + 1
    if (typeof after === 'string') parsed = false
    else lineBeads.push(after)
  }
  flush()
  if (!parsed) return result(parts, null)
  // every written line is one bead, in order (duplicates included); the index keeps the parts, never one copy of them
  const out = result(parts, null)
  const index: LineIndex = {parts, length: out.bytes.length, starts, ends, nos: starts.map((_, i) => i + 1), beads: lineBeads}
  out.snap = withIndex(snapshotOf(lineBeads, opts.base), index)
  return out
}

/** The snapshot of the written lines; the base's id map copied when only values changed (no 10k-entry rebuild). */
function snapshotOf(lineBeads: Bead[], base: TrackerSnapshot | undefined): TrackerSnapshot {
  if (base !== undefined && base.duplicateIds.length === 0 && base.beads.length === lineBeads.length) {
    let same = true
    for (let i = 0; i < lineBeads.length && same; i++) same = lineBeads[i].id === base.beads[i].id
    if (same) {
      const byId = new Map(base.byId)
      for (let i = 0; i < lineBeads.length; i++) if (lineBeads[i] !== base.beads[i]) byId.set(lineBeads[i].id, lineBeads[i])
      return {beads: lineBeads, byId, duplicateIds: []}
    }
  }
  const snap = emptySnapshot()
  const dupes = new Set<string>()
  for (const b of lineBeads) addBead(snap, b, dupes)
  return finish(snap, dupes)
}

/** `<file>.rejected-YYYYMMDDTHHMMSSZ` (SPEC 2.1). */
export function rejectedFileName(file: string, now: Date = new Date()): string {
  return `${file}.rejected-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`
}
