/**
 * The physical lines of a tracker file and the one-line parse (SPEC 2.1, 13.2).
 *
 * A read keeps the file's bytes in ONE buffer; each parsed bead remembers its
 * line as offsets into that buffer (a RawLine), not as a sliced copy. The
 * line's bytes and decoded text are produced only when someone asks (the
 * encoder, for a bead that changed; doctor; the incremental parse test).
 */
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import type {Bead, TrackerSnapshot} from './types.js'

/** Lines longer than this are refused as malformed. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024

export interface MalformedLine {
  /** 1-based physical line number */
  line: number
  /** the line decoded (without its newline) */
  text: string
  /** the line's exact bytes (without its newline): what `.rejected-*` files receive */
  bytes: Buffer
  reason: string
}

export function malformedMessage(file: string, m: Pick<MalformedLine, 'line' | 'reason'>): string {
  return `${sanitize(file)}:${m.line}: malformed bead (${sanitize(m.reason)}) — run 'helix tracker doctor' to inspect or repair`
}

export function malformedError(file: string, line: number, reason: string): HelixError {
  return new HelixError(malformedMessage(file, {line, reason}), EXIT.ERROR)
}

/**
 * Where a parsed bead came from: `buf[start, end)` is its line without the
 * `\n` (a CRLF line keeps its `\r`). Not enumerable on the bead, never serialized.
 */
export class RawLine {
  /** canonical encoding of the line as first parsed (computed on demand by the encoder) */
  canon?: string
  /** the bead exactly as parsed from this line, never modified (set on copy-on-write copies) */
  pristine?: Bead
  private decoded?: string
  constructor(
    readonly buf: Buffer,
    readonly start: number,
    readonly end: number,
  ) {}

  /** the line's exact bytes (a view, no copy) */
  get bytes(): Buffer {
    return this.buf.subarray(this.start, this.end)
  }

  /** the record's decoded text: invalid UTF-8 as U+FFFD, without a trailing `\r` */
  get text(): string {
    if (this.decoded === undefined) {
      const end = this.end > this.start && this.buf[this.end - 1] === 0x0d ? this.end - 1 : this.end
      this.decoded = this.buf.toString('utf8', this.start, end)
    }
    return this.decoded
  }
}

const RAW = Symbol.for('helix.tracker.rawLine')

export function rawOf(b: Bead): RawLine | undefined {
  return (b as unknown as Record<symbol, RawLine | undefined>)[RAW]
}

export function attachRaw(b: Bead, raw: RawLine): void {
  Object.defineProperty(b, RAW, {value: raw, enumerable: false, configurable: true, writable: true})
}

/** Parse one record's text; returns the bead or a reason string. */
export function parseLine(text: string, byteLength: number = text.length): Bead | string {
  if (byteLength > MAX_LINE_BYTES) return `line longer than ${MAX_LINE_BYTES} bytes`
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (error) {
    const msg = error instanceof Error ? error.message : String(error)
    // keep the reason to one short line; JSON.parse messages may quote the input
    return `invalid JSON: ${msg.split('\n')[0].slice(0, 120)}`
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object'
  const id = (v as {id?: unknown}).id
  if (typeof id !== 'string') return 'missing string "id"'
  if (id.trim() === '') return 'blank "id"'
  return v as Bead
}

/** Parse the line `buf[start, end)`; a bead carries its RawLine. */
export function parseRawLine(buf: Buffer, start: number, end: number): Bead | string {
  const raw = new RawLine(buf, start, end)
  // byte length first: a 16 MiB+ line is refused before it is decoded
  if (end - start > MAX_LINE_BYTES) return `line longer than ${MAX_LINE_BYTES} bytes`
  const r = parseLine(raw.text, end - start)
  if (typeof r !== 'string') attachRaw(r, raw)
  return r
}

export function hasBom(buf: Buffer): boolean {
  return buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf
}

/** Only spaces, tabs and `\r` between start and end. */
export function isBlankBytes(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i]
    if (c !== 32 && c !== 9 && c !== 13) return false
  }
  return true
}

/**
 * Calls `each(start, end, lineNo)` for every non-blank physical line of
 * `buf[from, to)` (end = offset of its `\n`, or `to`). `fileStart`: `from` is
 * the start of the file, so a UTF-8 byte order mark there is skipped. Returns
 * the number of the line after the last one seen.
 */
export function eachLine(buf: Buffer, from: number, to: number, firstLine: number, fileStart: boolean, each: (start: number, end: number, n: number) => void): number {
  let start = fileStart && hasBom(buf) ? from + 3 : from
  let n = firstLine
  while (start < to) {
    let end = buf.indexOf(0x0a, start)
    if (end === -1 || end > to) end = to
    if (!isBlankBytes(buf, start, end)) each(start, end, n)
    n++
    start = end + 1
  }
  return n
}

export function emptySnapshot(): TrackerSnapshot {
  return {beads: [], byId: new Map(), duplicateIds: []}
}

export function addBead(snap: TrackerSnapshot, bead: Bead, dupes: Set<string>): void {
  // one hash lookup: a set that does not grow the map replaced an earlier line's bead
  const byId = snap.byId as Map<string, Bead>
  const size = byId.size
  byId.set(bead.id, bead)
  if (byId.size === size) dupes.add(bead.id)
}

export function finish(snap: TrackerSnapshot, dupes: Set<string>): TrackerSnapshot {
  // Map keeps first-insertion order and the last value: file order, last wins.
  snap.beads = [...snap.byId.values()]
  snap.duplicateIds = [...dupes]
  return snap
}
