/**
 * Reading a whole tracker file (SPEC 2.1, 13.2): the strict parse every
 * command uses, the lenient one of doctor, doctor's per-line findings, and
 * the losing copies of duplicate ids. Every bead remembers its line as
 * offsets into the one buffer that was read (lines.ts), so a rewrite keeps
 * unchanged lines byte for byte.
 */
import {isUtf8} from 'node:buffer'
import type {Bead, TrackerSnapshot} from './types.js'
import {addBead, eachLine, emptySnapshot, finish, hasBom, malformedError, MAX_LINE_BYTES, parseLine, parseRawLine, RawLine, type MalformedLine} from './lines.js'
import {indexLine, newIndex, withIndex} from './line-index.js'
import {topLevelEntries} from './json-scan.js'

function asBuffer(input: string | Buffer): Buffer {
  return typeof input === 'string' ? Buffer.from(input, 'utf8') : input
}

/**
 * Strict parse: the first malformed line throws HelixError (exit 1) with
 * `<file>:<line>: malformed bead (<reason>) — run 'helix tracker doctor' …`.
 */
export function parseTracker(input: string | Buffer, file: string): TrackerSnapshot {
  const buf = asBuffer(input)
  const snap = emptySnapshot()
  const dupes = new Set<string>()
  // a file with a byte order mark is not indexed: its next parse is a full one
  const index = hasBom(buf) ? null : newIndex(buf)
  eachLine(buf, 0, buf.length, 1, true, (start, end, n) => {
    const r = parseRawLine(buf, start, end)
    if (typeof r === 'string') throw malformedError(file, n, r)
    addBead(snap, r, dupes)
    if (index !== null) indexLine(index, start, end, n, r)
  })
  return withIndex(finish(snap, dupes), index)
}

/**
 * The strict parse for a read-only snapshot that is never written back (the
 * one-shot read commands when no parse cache is built): the same beads, the
 * same duplicates and the same error for a malformed line as parseTracker, but
 * no RawLine per bead and no line index (at 100k beads those cost as
 * much garbage collection as the beads themselves).
 */
export function parseTrackerLean(buf: Buffer, file: string): TrackerSnapshot {
  const snap = emptySnapshot()
  const dupes = new Set<string>()
  eachLine(buf, 0, buf.length, 1, true, (start, end, n) => {
    // as parseRawLine: the byte length first, then the text without a trailing CR
    if (end - start > MAX_LINE_BYTES) throw malformedError(file, n, `line longer than ${MAX_LINE_BYTES} bytes`)
    const r = parseLine(buf.toString('utf8', start, end > start && buf[end - 1] === 0x0d ? end - 1 : end), end - start)
    if (typeof r === 'string') throw malformedError(file, n, r)
    addBead(snap, r, dupes)
  })
  return finish(snap, dupes)
}

/** Lenient parse for doctor: malformed lines are returned (with their exact bytes), not thrown. */
export function parseTrackerLenient(input: string | Buffer): {snapshot: TrackerSnapshot; malformed: MalformedLine[]} {
  const buf = asBuffer(input)
  const snap = emptySnapshot()
  const dupes = new Set<string>()
  const malformed: MalformedLine[] = []
  eachLine(buf, 0, buf.length, 1, true, (start, end, n) => {
    const r = parseRawLine(buf, start, end)
    if (typeof r !== 'string') addBead(snap, r, dupes)
    else {
      const raw = new RawLine(buf, start, end)
      malformed.push({line: n, text: raw.text, bytes: raw.bytes, reason: r})
    }
  })
  return {snapshot: finish(snap, dupes), malformed}
}

/** Per-line findings for doctor: invalid UTF-8 and duplicate keys inside one record. */
export function lineFindings(input: string | Buffer): {invalidUtf8: number[]; duplicateKeys: Array<{line: number; keys: string[]}>} {
  const buf = asBuffer(input)
  const invalidUtf8: number[] = []
  const duplicateKeys: Array<{line: number; keys: string[]}> = []
  eachLine(buf, 0, buf.length, 1, true, (start, end, n) => {
    const raw = new RawLine(buf, start, end)
    if (!isUtf8(raw.bytes)) invalidUtf8.push(n)
    const entries = topLevelEntries(raw.text)
    if (!entries) return
    const seen = new Set<string>()
    const dup = new Set<string>()
    for (const e of entries) {
      if (seen.has(e.key)) dup.add(e.key)
      seen.add(e.key)
    }
    if (dup.size) duplicateKeys.push({line: n, keys: [...dup]})
  })
  return {invalidUtf8, duplicateKeys}
}

/**
 * The losing copies of duplicate ids (every line of a duplicated id except the
 * last), verbatim (bytes) with their line numbers. A rewrite keeps only the last copy,
 * so callers save these lines instead of dropping them silently.
 */
export function supersededDuplicateLines(input: string | Buffer, snap: TrackerSnapshot): Array<{line: number; text: string; bytes: Buffer}> {
  if (snap.duplicateIds.length === 0) return []
  const buf = asBuffer(input)
  const dup = new Set(snap.duplicateIds)
  const lastLine = new Map<string, number>()
  const found: Array<{line: number; text: string; bytes: Buffer; id: string}> = []
  eachLine(buf, 0, buf.length, 1, true, (start, end, n) => {
    const r: Bead | string = parseRawLine(buf, start, end)
    if (typeof r !== 'string' && dup.has(r.id)) {
      const raw = new RawLine(buf, start, end)
      found.push({line: n, text: raw.text, bytes: raw.bytes, id: r.id})
      lastLine.set(r.id, n)
    }
  })
  return found.filter((f) => lastLine.get(f.id) !== f.line).map(({line, text, bytes}) => ({line, text, bytes}))
}
