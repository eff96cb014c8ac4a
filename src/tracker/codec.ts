/**
 * DDx-compatible JSONL codec for the bead tracker (SPEC 2.1).
 *
 * Reading: one JSON object per line, blank lines skipped, duplicate ids resolved
 * last-wins. A malformed line is an error naming file and line.
 *
 * Writing: records sorted by id (bytewise), keys sorted at every depth except
 * dependency objects (issue_id, depends_on_id, type, created_at, created_by,
 * metadata, then the rest alphabetically), compact JSON, `<` `>` `&` U+2028
 * U+2029 escaped as \uXXXX, other non-ASCII raw, `\n` after every line, and the
 * fields DDx omits when empty dropped. Canonical input re-encodes byte-identically.
 */
import {isUtf8} from 'node:buffer'
import {HelixError, EXIT} from '../util/errors.js'
import {INTERPRETED_KEYS} from './fields.js'
import {sanitize} from '../util/sanitize.js'
import type {Bead, TrackerSnapshot} from './types.js'

/** Lines longer than this are refused as malformed. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024

/** Fields DDx leaves out when empty (Go `omitempty`). */
export const OMIT_WHEN_EMPTY: ReadonlySet<string> = new Set([
  'owner',
  'labels',
  'parent',
  'description',
  'acceptance',
  'notes',
  'dependencies',
])

const DEP_KEY_ORDER = ['issue_id', 'depends_on_id', 'type', 'created_at', 'created_by', 'metadata']
const DEP_KEY_RANK = new Map(DEP_KEY_ORDER.map((k, i) => [k, i]))

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

function emptySnapshot(): TrackerSnapshot {
  return {beads: [], byId: new Map(), duplicateIds: []}
}

/** Parse one line; returns the bead or a reason string. */
function parseLine(line: string): Bead | string {
  if (line.length > MAX_LINE_BYTES && Buffer.byteLength(line, 'utf8') > MAX_LINE_BYTES) {
    return `line longer than ${MAX_LINE_BYTES} bytes`
  }
  let v: unknown
  try {
    v = JSON.parse(line)
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

/** One physical line: its decoded text (what is parsed) and its exact bytes (what is kept). */
interface PhysLine {
  n: number
  text: string
  bytes: Buffer
  /** byte offset of the line's start, and of its `\n` (or the end of the buffer) */
  start: number
  end: number
}

/**
 * Split the file into lines, walking the bytes and the decoded text side by
 * side. A `\n` byte never occurs inside a UTF-8 sequence and U+FFFD (what
 * invalid bytes decode to) is never a newline, so the two splits line up.
 */
function* physLines(buf: Buffer, text: string, fileStart = true, firstLine = 1): Generator<PhysLine> {
  // a UTF-8 byte order mark (some editors add one) is not part of the first record
  let start = fileStart && text.charCodeAt(0) === 0xfeff ? 1 : 0
  let bstart = start === 1 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0
  let n = firstLine - 1
  const len = text.length
  while (start < len) {
    let end = text.indexOf('\n', start)
    if (end === -1) end = len
    let bend = buf.indexOf(0x0a, bstart)
    if (bend === -1) bend = buf.length
    n++
    let line = text.slice(start, end)
    const bytes = buf.subarray(bstart, bend)
    // a CRLF line: the record is the text before `\r`; its bytes keep the `\r`, so an
    // unchanged line is written back exactly as it was (SPEC 13.2)
    if (line.endsWith('\r')) line = line.slice(0, -1)
    yield {n, text: line, bytes, start: bstart, end: bend}
    start = end + 1
    bstart = bend + 1
  }
}

function asBuffer(input: string | Buffer): {buf: Buffer; text: string} {
  return typeof input === 'string' ? {buf: Buffer.from(input, 'utf8'), text: input} : {buf: input, text: input.toString('utf8')}
}

// ------------------------------------------------------------- raw lines

/** Where a parsed bead came from: its exact line bytes and decoded text. Not enumerable, never serialized. */
export interface RawLine {
  bytes: Buffer
  text: string
  /** canonical encoding of the line as first parsed (computed on demand) */
  canon?: string
  /**
   * The bead exactly as parsed from this line, never modified (set on copies
   * made by cloneSnapshot): a copy still equal to it is unchanged, so its line
   * is written back without encoding it (issue 11).
   */
  pristine?: Bead
}

const RAW = Symbol.for('helix.tracker.rawLine')

export function rawOf(b: Bead): RawLine | undefined {
  return (b as unknown as Record<symbol, RawLine | undefined>)[RAW]
}

function attachRaw(b: Bead, raw: RawLine): void {
  Object.defineProperty(b, RAW, {value: raw, enumerable: false, configurable: true, writable: true})
}

/** A deep copy of a JSON value (plain objects, arrays, primitives). */
function cloneJson<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(cloneJson) as T
  const o: Record<string, unknown> = {}
  for (const k of Object.keys(v)) o[k] = cloneJson((v as Record<string, unknown>)[k])
  return o as T
}

/** Same JSON value: same keys (any order) and equal values at every depth, numbers by Object.is. */
function sameJson(a: unknown, b: unknown): boolean {
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

/**
 * A private, mutable deep copy of a snapshot (what a mutation gets instead of
 * a fresh parse of an unchanged file, issue 11). Each copy remembers its line
 * and the untouched parse it came from, so a copy still equal to it is written
 * back byte for byte without being encoded (SPEC 13.2).
 */
export function cloneSnapshot(snap: TrackerSnapshot): TrackerSnapshot {
  const byId = new Map<string, Bead>()
  for (const b of snap.beads) {
    // spread copies the own enumerable keys in order (not the raw line symbol); nested values are copied too
    const c: Bead = {...b}
    for (const k in c) {
      const v = c[k]
      if (v !== null && typeof v === 'object') c[k] = cloneJson(v)
    }
    const raw = rawOf(b)
    if (raw) attachRaw(c, {bytes: raw.bytes, text: raw.text, canon: raw.canon, pristine: raw.pristine ?? b})
    byId.set(c.id, c)
  }
  return {beads: [...byId.values()], byId, duplicateIds: [...snap.duplicateIds]}
}

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (c !== 32 && c !== 9 && c !== 13) return false
  }
  return true
}

function addBead(snap: TrackerSnapshot, bead: Bead, dupes: Set<string>): void {
  // one hash lookup: a set that does not grow the map replaced an earlier line's bead
  const size = snap.byId.size
  snap.byId.set(bead.id, bead)
  if (snap.byId.size === size) dupes.add(bead.id)
}

function finish(snap: TrackerSnapshot, dupes: Set<string>): TrackerSnapshot {
  // Map keeps first-insertion order and the last value: file order, last wins.
  snap.beads = [...snap.byId.values()]
  snap.duplicateIds = [...dupes]
  return snap
}

/**
 * Strict parse: the first malformed line throws HelixError (exit 1) with
 * `<file>:<line>: malformed bead (<reason>) — run 'helix tracker doctor' …`.
 * Every bead remembers its line's exact bytes (see rawOf), so a rewrite can
 * keep the lines it does not change byte for byte (SPEC 13.2).
 */
export function parseTracker(input: string | Buffer, file: string): TrackerSnapshot {
  const {buf, text} = asBuffer(input)
  const snap = emptySnapshot()
  const dupes = new Set<string>()
  const index = newIndex(buf)
  for (const l of physLines(buf, text)) {
    if (isBlank(l.text)) continue
    const r = parseLine(l.text)
    if (typeof r === 'string') throw new HelixError(malformedMessage(file, {line: l.n, reason: r}), EXIT.ERROR)
    attachRaw(r, {bytes: l.bytes, text: l.text})
    addBead(snap, r, dupes)
    indexLine(index, l.start, l.end, l.n, r)
  }
  return withIndex(finish(snap, dupes), index)
}

// ------------------------------------------------------- incremental parse

/**
 * Where each bead of a snapshot sits in the bytes it was parsed from (issue
 * 11): every non-blank line, in file order, duplicates included. Lets the
 * next parse of a changed file reuse the beads of the lines that did not change.
 */
interface LineIndex {
  buf: Buffer
  starts: number[]
  /** offset of the line's `\n` (or the end of the buffer) */
  ends: number[]
  /** 1-based physical line number */
  nos: number[]
  beads: Bead[]
}

const INDEX = new WeakMap<TrackerSnapshot, LineIndex>()

function hasBom(buf: Buffer): boolean {
  return buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf
}

function newIndex(buf: Buffer): LineIndex | null {
  return hasBom(buf) ? null : {buf, starts: [], ends: [], nos: [], beads: []}
}

function indexLine(index: LineIndex | null, start: number, end: number, n: number, b: Bead): void {
  if (index === null) return
  index.starts.push(start)
  index.ends.push(end)
  index.nos.push(n)
  index.beads.push(b)
}

function withIndex(snap: TrackerSnapshot, index: LineIndex | null): TrackerSnapshot {
  if (index !== null) INDEX.set(snap, index)
  return snap
}

/** Length of the common prefix of a and b (native compares of blocks, then bytes). */
function commonPrefix(a: Buffer, b: Buffer): number {
  const max = Math.min(a.length, b.length)
  const BLOCK = 4096
  let i = 0
  while (i + BLOCK <= max && a.compare(b, i, i + BLOCK, i, i + BLOCK) === 0) i += BLOCK
  while (i < max && a[i] === b[i]) i++
  return i
}

/** Length of the common suffix of a and b, at most `max`. */
function commonSuffix(a: Buffer, b: Buffer, max: number): number {
  const BLOCK = 4096
  let k = 0
  while (k + BLOCK <= max && a.compare(b, b.length - k - BLOCK, b.length - k, a.length - k - BLOCK, a.length - k) === 0) k += BLOCK
  while (k < max && a[a.length - 1 - k] === b[b.length - 1 - k]) k++
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
  const old = prev === undefined ? undefined : INDEX.get(prev)
  if (old === undefined || hasBom(buf)) return parseTracker(buf, file)
  const a = old.buf
  const p = commonPrefix(a, buf)
  const sfx = commonSuffix(a, buf, Math.min(a.length, buf.length) - p)
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
  const snap = emptySnapshot()
  const dupes = new Set<string>()
  const index = newIndex(buf)!
  for (let i = 0; i < head; i++) {
    addBead(snap, old.beads[i], dupes)
    indexLine(index, old.starts[i], old.ends[i], old.nos[i], old.beads[i])
  }
  const firstLine = head > 0 ? old.nos[head - 1] + 1 : 1
  const mid = buf.subarray(midStart, midEnd)
  let nextLine = firstLine
  for (const l of physLines(mid, mid.toString('utf8'), midStart === 0, firstLine)) {
    nextLine = l.n + 1
    if (isBlank(l.text)) continue
    const r = parseLine(l.text)
    if (typeof r === 'string') throw new HelixError(malformedMessage(file, {line: l.n, reason: r}), EXIT.ERROR)
    // a copy: a view would keep this whole read alive as long as the bead is cached
    attachRaw(r, {bytes: Buffer.from(l.bytes), text: l.text})
    addBead(snap, r, dupes)
    indexLine(index, l.start + midStart, l.end + midStart, l.n, r)
  }
  // the middle ends right before a line start, so it counted every line before the tail
  const lineShift = tail < n0 ? nextLine - old.nos[tail] : 0
  for (let i = tail; i < n0; i++) {
    addBead(snap, old.beads[i], dupes)
    indexLine(index, old.starts[i] + shift, old.ends[i] + shift, old.nos[i] + lineShift, old.beads[i])
  }
  return withIndex(finish(snap, dupes), index)
}

/** Lenient parse for doctor: malformed lines are returned (with their exact bytes), not thrown. */
export function parseTrackerLenient(input: string | Buffer): {snapshot: TrackerSnapshot; malformed: MalformedLine[]} {
  const {buf, text} = asBuffer(input)
  const snap = emptySnapshot()
  const dupes = new Set<string>()
  const malformed: MalformedLine[] = []
  for (const l of physLines(buf, text)) {
    if (isBlank(l.text)) continue
    const r = parseLine(l.text)
    if (typeof r === 'string') malformed.push({line: l.n, text: l.text, bytes: l.bytes, reason: r})
    else {
      attachRaw(r, {bytes: l.bytes, text: l.text})
      addBead(snap, r, dupes)
    }
  }
  return {snapshot: finish(snap, dupes), malformed}
}

/** Per-line findings for doctor: invalid UTF-8 and duplicate keys inside one record. */
export function lineFindings(input: string | Buffer): {invalidUtf8: number[]; duplicateKeys: Array<{line: number; keys: string[]}>} {
  const {buf, text} = asBuffer(input)
  const invalidUtf8: number[] = []
  const duplicateKeys: Array<{line: number; keys: string[]}> = []
  for (const l of physLines(buf, text)) {
    if (isBlank(l.text)) continue
    if (l.text.includes('\ufffd') && !isUtf8(l.bytes)) invalidUtf8.push(l.n)
    const entries = topLevelEntries(l.text)
    if (!entries) continue
    const seen = new Set<string>()
    const dup = new Set<string>()
    for (const e of entries) {
      if (seen.has(e.key)) dup.add(e.key)
      seen.add(e.key)
    }
    if (dup.size) duplicateKeys.push({line: l.n, keys: [...dup]})
  }
  return {invalidUtf8, duplicateKeys}
}

// ------------------------------------------------------- raw JSON scanning

interface RawEntry {
  key: string
  keyRaw: string
  valueRaw: string
}

function skipWs(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break
    i++
  }
  return i
}

function skipString(s: string, i: number): number {
  // s[i] === '"'
  i++
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c === 92) i += 2
    else if (c === 34) return i + 1
    else i++
  }
  return -1
}

function skipValue(s: string, i: number): number {
  const c = s[i]
  if (c === '"') return skipString(s, i)
  if (c === '{' || c === '[') {
    let depth = 0
    while (i < s.length) {
      const d = s[i]
      if (d === '"') {
        i = skipString(s, i)
        if (i < 0) return -1
        continue
      }
      if (d === '{' || d === '[') depth++
      else if (d === '}' || d === ']') {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return -1
  }
  // number, true, false, null
  while (i < s.length && !/[\s,}\]]/.test(s[i])) i++
  return i
}

/** The top-level key/value texts of a JSON object line, in file order (duplicates included); null when not an object. */
export function topLevelEntries(line: string): RawEntry[] | null {
  let i = skipWs(line, 0)
  if (line[i] !== '{') return null
  i = skipWs(line, i + 1)
  const out: RawEntry[] = []
  if (line[i] === '}') return out
  while (i < line.length) {
    if (line[i] !== '"') return null
    const kEnd = skipString(line, i)
    if (kEnd < 0) return null
    const keyRaw = line.slice(i, kEnd)
    i = skipWs(line, kEnd)
    if (line[i] !== ':') return null
    i = skipWs(line, i + 1)
    const vEnd = skipValue(line, i)
    if (vEnd < 0) return null
    let key: string
    try {
      key = JSON.parse(keyRaw) as string
    } catch {
      // not a JSON string key: not a record we can take apart (callers fall back to the canonical encoding)
      return null
    }
    out.push({key, keyRaw, valueRaw: line.slice(i, vEnd)})
    i = skipWs(line, vEnd)
    if (line[i] === ',') i = skipWs(line, i + 1)
    else if (line[i] === '}') return out
    else return null
  }
  return null
}

/**
 * The losing copies of duplicate ids (every line of a duplicated id except the
 * last), verbatim (bytes) with their line numbers. A rewrite keeps only the last copy,
 * so callers save these lines instead of dropping them silently.
 */
export function supersededDuplicateLines(input: string | Buffer, snap: TrackerSnapshot): Array<{line: number; text: string; bytes: Buffer}> {
  if (snap.duplicateIds.length === 0) return []
  const {buf, text} = asBuffer(input)
  const dup = new Set(snap.duplicateIds)
  const lastLine = new Map<string, number>()
  const found: Array<{line: number; text: string; bytes: Buffer; id: string}> = []
  for (const l of physLines(buf, text)) {
    if (isBlank(l.text)) continue
    const r = parseLine(l.text)
    if (typeof r !== 'string' && dup.has(r.id)) {
      found.push({line: l.n, text: l.text, bytes: l.bytes, id: r.id})
      lastLine.set(r.id, l.n)
    }
  }
  return found.filter((f) => lastLine.get(f.id) !== f.line).map(({line, text, bytes}) => ({line, text, bytes}))
}

// ---------------------------------------------------------------- encoding

const NEEDS_HTML_ESCAPE = /[<>&\u2028\u2029]/
const HTML_ESCAPE = /[<>&\u2028\u2029]/g
const HTML_MAP: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
}

function encString(s: string): string {
  const j = JSON.stringify(s)
  return NEEDS_HTML_ESCAPE.test(j) ? j.replace(HTML_ESCAPE, (c) => HTML_MAP[c]) : j
}

function bytewise(a: string, b: string): number {
  // JS string comparison is by UTF-16 code unit; it matches UTF-8 byte order
  // except for astral vs U+E000–U+FFFF, which never occur in bead keys/ids in practice.
  return a < b ? -1 : a > b ? 1 : 0
}

function encValue(v: unknown, depObject = false): string {
  if (v === null) return 'null'
  switch (typeof v) {
    case 'string':
      return encString(v)
    case 'number':
      return Number.isFinite(v) ? JSON.stringify(v) : 'null'
    case 'boolean':
      return v ? 'true' : 'false'
    case 'object': {
      if (Array.isArray(v)) return '[' + v.map((x) => (x === undefined ? 'null' : encValue(x))).join(',') + ']'
      const o = v as Record<string, unknown>
      const keys = Object.keys(o).filter((k) => o[k] !== undefined)
      if (depObject) keys.sort(depKeyCompare)
      else keys.sort(bytewise)
      return '{' + keys.map((k) => encString(k) + ':' + encValue(o[k])).join(',') + '}'
    }
    default:
      return 'null'
  }
}

function depKeyCompare(a: string, b: string): number {
  const ra = DEP_KEY_RANK.get(a) ?? DEP_KEY_ORDER.length
  const rb = DEP_KEY_RANK.get(b) ?? DEP_KEY_ORDER.length
  return ra !== rb ? ra - rb : bytewise(a, b)
}

function isEmptyValue(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0)
}

function escapeHtml(j: string): string {
  if (!NEEDS_HTML_ESCAPE.test(j)) return j
  // literal replaceAll passes are much faster than a regex with a callback
  let out = j
  if (out.includes('<')) out = out.replaceAll('<', '\\u003c')
  if (out.includes('>')) out = out.replaceAll('>', '\\u003e')
  if (out.includes('&')) out = out.replaceAll('&', '\\u0026')
  if (out.includes('\u2028')) out = out.replaceAll('\u2028', '\\u2028')
  if (out.includes('\u2029')) out = out.replaceAll('\u2029', '\\u2029')
  return out
}

/** True when every object in `v` already has its keys in canonical order (plain sorted, or dependency order). */
function canonicalValue(v: unknown, depObject: boolean): boolean {
  if (v === null || typeof v !== 'object') return true
  if (Array.isArray(v)) {
    for (const x of v) if (!canonicalValue(x, false)) return false
    return true
  }
  const o = v as Record<string, unknown>
  const keys = Object.keys(o)
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && (depObject ? depKeyCompare(keys[i - 1], keys[i]) : bytewise(keys[i - 1], keys[i])) >= 0) return false
    if (!canonicalValue(o[keys[i]], false)) return false
  }
  return true
}

/**
 * Fast-path test: the bead's keys are already in canonical order at every depth
 * and no DDx-omitted field is empty, so native JSON.stringify (plus the html
 * escapes) yields exactly the canonical line. True for every freshly parsed
 * canonical record; a record whose keys were added out of order takes the slow
 * path. (Native stringify is ~10x faster and allocates far less.)
 */
function alreadyCanonical(b: Bead): boolean {
  const keys = Object.keys(b)
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    if (i > 0 && bytewise(keys[i - 1], k) >= 0) return false
    const v = b[k]
    if (OMIT_WHEN_EMPTY.has(k) && isEmptyValue(v)) return false
    if (v !== null && typeof v === 'object') {
      if (k === 'dependencies' && Array.isArray(v)) {
        for (const d of v) if (d !== null && typeof d === 'object' && !Array.isArray(d) ? !canonicalValue(d, true) : !canonicalValue(d, false)) return false
      } else if (!canonicalValue(v, false)) return false
    } else if (typeof v === 'number' && !Number.isFinite(v)) return false
  }
  return true
}

/** One canonical line for a bead, without the trailing newline. */
export function serializeBead(b: Bead): string {
  if (alreadyCanonical(b)) return escapeHtml(JSON.stringify(b))
  return serializeBeadSlow(b)
}

/** The keys a bead's line carries, in written (bytewise) order: no undefined values, no empty omittable ones. */
function writtenKeys(b: Bead): string[] {
  const keys = Object.keys(b).filter((k) => {
    const v = b[k]
    if (v === undefined) return false
    if (OMIT_WHEN_EMPTY.has(k) && isEmptyValue(v)) return false
    return true
  })
  return keys.sort(bytewise)
}

/** The reference encoder (sorts every object's keys). Exported for tests. */
export function serializeBeadSlow(b: Bead): string {
  const keys = writtenKeys(b)
  let out = '{'
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    const v = b[k]
    if (i) out += ','
    out += encEntry(k, v)
  }
  return out + '}'
}

/** `"key":value` in canonical form (dependency objects keep their own key order rule). */
function encEntry(k: string, v: unknown): string {
  if (k === 'dependencies' && Array.isArray(v)) {
    return encString(k) + ':[' + v.map((d) => (d && typeof d === 'object' && !Array.isArray(d) ? encValue(d, true) : encValue(d))).join(',') + ']'
  }
  return encString(k) + ':' + encValue(v)
}

/** The whole file: sorted by id, one line each, newline-terminated (empty string for no beads). */
export function serializeTracker(beads: Bead[]): string {
  return serializeTrackerBuffer(beads).toString('utf8')
}

/**
 * The line to write for `b` (SPEC 13.2): the bead's original bytes when it is
 * unchanged since it was read (whatever their key order, spacing or encoding);
 * otherwise the canonical line, in which every key helix does not interpret
 * and did not change keeps its original JSON text (big integers, `1.0`, `1e2`,
 * `-0`, escapes).
 */
export function encodeBeadLine(b: Bead): string | Buffer {
  const raw = rawOf(b)
  // a copy still equal to the bead its line parsed to encodes to raw.canon: the line's bytes
  if (raw?.pristine !== undefined && sameJson(b, raw.pristine)) return raw.bytes
  const cur = serializeBead(b)
  if (!raw) return cur
  if (cur === raw.text) return raw.bytes
  if (raw.canon === undefined) {
    try {
      raw.canon = serializeBead(JSON.parse(raw.text) as Bead)
    } catch {
      // cannot happen for a line that parsed once; '' never equals a serialization, so the line counts as changed
      raw.canon = ''
    }
  }
  if (cur === raw.canon) return raw.bytes
  return serializeKeepingRawValues(b, raw)
}

function serializeKeepingRawValues(b: Bead, raw: RawLine): string {
  const entries = topLevelEntries(raw.text)
  if (!entries) return serializeBead(b)
  const byKey = new Map<string, RawEntry>()
  for (const e of entries) byKey.set(e.key, e) // last one wins, like JSON.parse
  const keys = writtenKeys(b)
  let out = '{'
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]
    const v = b[k]
    if (i) out += ','
    const e = INTERPRETED_KEYS.has(k) ? undefined : byKey.get(k)
    if (e !== undefined && sameValueText(e.valueRaw, v)) {
      out += e.keyRaw + ':' + e.valueRaw
      continue
    }
    out += encEntry(k, v)
  }
  return out + '}'
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
  return serializeTrackerWithSnapshot(beads, false).buf
}

function sortedById(beads: Bead[]): Bead[] {
  // a tracker helix wrote is already sorted: check in one pass before sorting
  let sorted = true
  for (let i = 1; i < beads.length && sorted; i++) if (bytewise(beads[i - 1].id, beads[i].id) > 0) sorted = false
  return sorted ? beads : [...beads].sort((a, b) => bytewise(a.id, b.id))
}

/**
 * The whole file as bytes (as serializeTrackerBuffer) and, with `wantSnap`,
 * the snapshot a fresh parse of exactly those bytes yields (issue 11: the
 * writer's read cache needs no re-read and re-parse of its own write).
 * Unchanged beads are the untouched parses they were copied from; changed
 * lines are parsed from their new text. snap is null when a written line
 * would not parse as a bead (a fresh read then reports it).
 */
export function serializeTrackerWithSnapshot(beads: Bead[], wantSnap = true): {buf: Buffer; snap: TrackerSnapshot | null} {
  if (beads.length === 0) return {buf: Buffer.alloc(0), snap: wantSnap ? emptySnapshot() : null}
  const sorted = sortedById(beads)
  const parts: Buffer[] = []
  let pending: string[] = []
  // Unchanged lines that were consecutive in the file they came from (with a
  // `\n` between them) are copied as one slice of it, not line by line.
  let run: {mem: Uint8Array; start: number; end: number} | null = null
  const closeRun = () => {
    if (run) parts.push(Buffer.from(run.mem.buffer, run.start, run.end - run.start), NL)
    run = null
  }
  const flush = () => {
    closeRun()
    if (pending.length) parts.push(Buffer.from(pending.join('\n') + '\n', 'utf8'))
    pending = []
  }
  const pushRaw = (line: Buffer) => {
    if (pending.length) flush()
    const at = line.byteOffset
    if (run && run.mem.buffer === line.buffer && at === run.end + 1 && run.mem[run.end] === 0x0a) {
      run.end = at + line.length
      return
    }
    closeRun()
    run = {mem: new Uint8Array(line.buffer), start: at, end: at + line.length}
  }
  let snap: TrackerSnapshot | null = wantSnap ? emptySnapshot() : null
  const dupes = new Set<string>()
  const starts: number[] = []
  const lineBeads: Bead[] = []
  let off = 0
  for (const b of sorted) {
    const line = encodeBeadLine(b)
    if (typeof line === 'string') {
      closeRun()
      pending.push(line)
    } else pushRaw(line)
    if (snap === null) continue
    starts.push(off)
    off += (typeof line === 'string' ? Buffer.byteLength(line, 'utf8') : line.length) + 1
    const raw = rawOf(b)
    let after: Bead | string
    if (typeof line !== 'string' && raw?.pristine !== undefined) after = raw.pristine
    else {
      const text = typeof line === 'string' ? line : raw!.text
      after = parseLine(text)
      if (typeof after !== 'string') attachRaw(after, {bytes: typeof line === 'string' ? Buffer.from(line, 'utf8') : line, text})
    }
    if (typeof after === 'string') snap = null
    else {
      addBead(snap, after, dupes)
      lineBeads.push(after)
    }
  }
  flush()
  const buf = parts.length === 1 ? parts[0] : Buffer.concat(parts)
  if (snap === null) return {buf, snap}
  const index: LineIndex = {buf, starts, ends: starts.map((x, i) => (i + 1 < starts.length ? starts[i + 1] - 1 : buf.length - 1)), nos: starts.map((_, i) => i + 1), beads: []}
  snap = finish(snap, dupes)
  // every written line is one bead, in order (duplicates included)
  index.beads = lineBeads
  return {buf, snap: withIndex(snap, index)}
}

// ------------------------------------------------------------ rejected lines

/** `<file>.rejected-YYYYMMDDTHHMMSSZ` (SPEC 2.1). */
export function rejectedFileName(file: string, now: Date = new Date()): string {
  return `${file}.rejected-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')}`
}
