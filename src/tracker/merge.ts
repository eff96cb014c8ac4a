/**
 * The tracker's three-way merge (SPEC 19.3), the work of `helix tracker merge
 * %O %A %B`, the git merge driver `helix-beads`.
 *
 * Beads are matched by id. Beads keep the base's order; beads new on a side
 * are appended, ours' first. A bead is written byte for byte as one side has
 * it whenever the merge result equals that side (SPEC 13.2); only a bead both
 * sides changed differently gets a new line, encoded by the tracker codec from
 * ours' line, so its unchanged uninterpreted values keep their JSON text.
 * Field rules: merge-fields.ts. A side that does not parse as a tracker, or
 * that holds one id twice, fails the merge: git then reports a conflict.
 */
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {copyBead, encodeBeadLine, encodeKeepingRawValues, parseTracker, rawOf, RawLine} from './codec.js'
import {mergeBead, sameJson} from './merge-fields.js'
import {hiddenNumberChange} from './merge-numbers.js'
import {setOwn} from './own-keys.js'
import type {Bead, TrackerSnapshot} from './types.js'

export interface MergeSides<T> {
  base: T
  ours: T
  theirs: T
}

export interface MergeResult {
  /** the merged tracker's bytes */
  buf: Buffer
  /** one line each for what a person may want to check (beads kept against a removal) */
  notices: string[]
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf])
const NL = Buffer.from('\n')
const CRLF = Buffer.from('\r\n')

/**
 * The form of a side's file that is not its beads: a BOM, and how its lines end
 * (as its first line does). The result has ours' form: ours' own lines keep their
 * bytes (a CRLF line keeps its `\r`), every other line ends as ours' first does.
 */
interface Style {
  bom: boolean
  eol: Buffer
}

function styleOf(buf: Buffer): Style {
  const nl = buf.indexOf(0x0a)
  return {bom: buf.subarray(0, 3).equals(BOM), eol: nl > 0 && buf[nl - 1] === 0x0d ? CRLF : NL}
}

function sameStyle(a: Style, b: Style): boolean {
  return a.bom === b.bom && a.eol === b.eol
}

function withoutCr(line: Buffer): Buffer {
  return line.length > 0 && line[line.length - 1] === 0x0d ? line.subarray(0, -1) : line
}

function parseSide(buf: Buffer, label: string, strict: boolean): TrackerSnapshot {
  const snap = parseTracker(buf, label)
  if (strict && snap.duplicateIds.length > 0) {
    throw new HelixError(`${label}: bead ${snap.duplicateIds[0]} appears more than once; not merging (run 'helix tracker doctor --repair' on that side)`, EXIT.ERROR)
  }
  return snap
}

/** the encoder's answer as bytes or text (an unchanged line comes back as its RawLine) */
function encoded(b: Bead): string | Buffer {
  const x = encodeBeadLine(b)
  return x instanceof RawLine ? x.bytes : x
}

function bytesOf(b: Bead): Buffer | undefined {
  return rawOf(b)?.bytes
}

function sameBytes(a: Bead, b: Bead): boolean {
  const x = bytesOf(a)
  const y = bytesOf(b)
  return x !== undefined && y !== undefined && x.equals(y)
}

/**
 * The line for `merged`, encoded from ours' line: each value keeps its JSON
 * text from ours' line, or else from theirs' (a value only theirs changed).
 */
function encodeFrom(ours: Bead, theirs: Bead, merged: Bead): string | Buffer {
  const copy = copyBead(ours)
  for (const k of Object.keys(copy)) if (!Object.hasOwn(merged, k)) delete copy[k]
  for (const k of Object.keys(merged)) setOwn(copy, k, merged[k])
  const x = encodeBeadLine(copy)
  return x instanceof RawLine ? x.bytes : encodeKeepingRawValues(copy, [rawOf(ours), rawOf(theirs)])
}

/** Both sides hold a value whose numbers differ only in text JSON.parse reads as one number (merge-numbers.ts). */
function numbersDiffer(id: string, key: string): HelixError {
  return new HelixError(`bead ${sanitize(id)}: the sides write ${sanitize(key)} with numbers that read as the same value but are not the same text; not merging it (resolve this conflict by hand)`, EXIT.ERROR)
}

/** The line of a bead both sides have (base undefined: added on both). */
function resolveLine(base: Bead | undefined, ours: Bead, theirs: Bead): string | Buffer {
  const line = (b: Bead) => bytesOf(b) ?? encoded(b)
  if (sameBytes(ours, theirs)) return line(ours)
  if (base !== undefined && sameBytes(base, ours)) return line(theirs)
  if (base !== undefined && sameBytes(base, theirs)) return line(ours)
  const hidden = hiddenNumberChange(base, ours, theirs)
  if (hidden !== undefined) throw numbersDiffer(ours.id, hidden)
  if (sameJson(ours, theirs)) return line(ours)
  if (base !== undefined && sameJson(base, ours)) return line(theirs)
  if (base !== undefined && sameJson(base, theirs)) return line(ours)
  const merged = mergeBead(base, ours, theirs)
  if (sameJson(merged, ours)) return line(ours)
  if (sameJson(merged, theirs)) return line(theirs)
  return encodeFrom(ours, theirs, merged)
}

/**
 * Merge three tracker files. Throws HelixError (exit 1) naming the side that
 * is not a valid tracker; nothing is guessed.
 */
export function mergeTracker(input: MergeSides<Buffer>, labels: MergeSides<string> = {base: 'base', ours: 'ours', theirs: 'theirs'}): MergeResult {
  const base = parseSide(input.base, labels.base, false)
  const ours = parseSide(input.ours, labels.ours, true)
  const theirs = parseSide(input.theirs, labels.theirs, true)
  // one side unchanged: the other side is the result, as it is (in ours' BOM and line endings)
  if (input.theirs.equals(input.base) || input.theirs.equals(input.ours)) return {buf: input.ours, notices: []}
  const style = styleOf(input.ours)
  if (input.ours.equals(input.base) && sameStyle(style, styleOf(input.theirs))) return {buf: input.theirs, notices: []}

  const order: string[] = []
  const listed = new Set<string>()
  for (const snap of [base, ours, theirs]) {
    for (const b of snap.beads) {
      if (listed.has(b.id)) continue
      listed.add(b.id)
      order.push(b.id)
    }
  }
  const notices: string[] = []
  const parts: Buffer[] = style.bom ? [BOM] : []
  for (const id of order) {
    const b = base.byId.get(id)
    const o = ours.byId.get(id)
    const t = theirs.byId.get(id)
    let line: string | Buffer | null
    if (o !== undefined && t !== undefined) line = resolveLine(b, o, t)
    else if (b === undefined) line = bytesOf((o ?? t)!) ?? null
    else if (o === undefined && t === undefined) line = null
    else {
      // removed on one side: stays removed unless the other side changed it
      const kept = (o ?? t)!
      if (sameJson(kept, b) && hiddenNumberChange(b, kept) === undefined) line = null
      else {
        line = bytesOf(kept)!
        const [gone, changed] = o === undefined ? ['ours', 'theirs'] : ['theirs', 'ours']
        notices.push(`${sanitize(id)} was removed in ${gone} and changed in ${changed}; keeping it`)
      }
    }
    if (line === null) continue
    if (typeof line === 'string') parts.push(Buffer.from(line, 'utf8'), style.eol)
    else if (o !== undefined && line === bytesOf(o)) parts.push(line, NL)
    // a line from theirs takes ours' ending
    else parts.push(withoutCr(line), style.eol)
  }
  return {buf: Buffer.concat(parts), notices}
}
