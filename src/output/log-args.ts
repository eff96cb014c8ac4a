// `helix logs` arguments: `--lines` ranges and pasted log pointers, `--slot`.
import {sanitize} from '../util/sanitize.js'
import {HelixError, EXIT} from '../util/errors.js'

/**
 * `--lines A-B`: the line range a log pointer names. Accepts `12-340`, `L12-L340`
 * and `L12–L340` (en dash, as the summary lines print it), and a single `L12`.
 */
export function parseLineRange(text: string, shown: string = text): {from: number; to: number} {
  const m = /^\s*L?(\d{1,9})(?:\s*[-–—]\s*L?(\d{1,9}))?\s*$/i.exec(text)
  const bad = (why: string) => new HelixError(`invalid --lines '${sanitize(shown)}': ${why}`, EXIT.ERROR)
  if (!m) throw bad('use A-B, e.g. 12-340 or L12–L340')
  const from = Number(m[1])
  const to = m[2] === undefined ? from : Number(m[2])
  if (from < 1) throw bad('line numbers start at 1')
  if (to < from) throw bad('the range ends before it starts')
  return {from, to}
}

/** A worker slot as an operator writes it: `w2`, `W2` or `2` (1..999). */
export function parseSlot(text: string): number {
  const m = /^\s*[wW]?(\d{1,3})\s*$/.exec(text)
  const n = m ? Number(m[1]) : 0
  if (!(n >= 1)) throw new HelixError(`invalid --slot '${sanitize(text)}': use wN or N, e.g. w2`, EXIT.ERROR)
  return n
}

export interface LinePointer {
  from: number
  to: number
  /** the `(wN)` of a --workers pointer */
  slot?: number
  /** the `in <path>` of a pasted summary pointer */
  file?: string
}

/**
 * `--lines` as pasted from a summary line: the range of {@link parseLineRange}, optionally
 * led by `log `, followed by a slot `(w2)` (SPEC 15.4) and by ` in <path>`:
 * `L40–L88 (w2)`, `log L40–L88 (w2) in /p/.helix-logs/helix-….log`.
 */
export function parseLinePointer(text: string): LinePointer {
  const m = /^\s*(?:log\s+)?(L?\d[^(]*?)\s*(?:\(\s*([^)]*?)\s*\))?\s*(?:\bin\s+(\S.*?))?\s*$/i.exec(text)
  if (!m) return parseLineRange(text)
  // the error names what was given, the whole pointer
  const range = parseLineRange(m[1], text)
  const out: LinePointer = {...range}
  if (m[2] !== undefined) {
    if (!/^[wW]?\d{1,3}$/.test(m[2])) throw new HelixError(`invalid --lines '${sanitize(text)}': the slot is written (wN), e.g. L40–L88 (w2)`, EXIT.ERROR)
    out.slot = parseSlot(m[2])
  }
  if (m[3] !== undefined) out.file = m[3]
  return out
}

