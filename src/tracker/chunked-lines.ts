/**
 * The tracker's lines read in chunks through one small buffer, for a reader that
 * keeps nothing of the bytes (`tracker ready`): the same lines, line numbers and
 * line-length refusal as eachLine over the whole file, without ever holding the
 * whole file. At 100k beads (69 MB) one whole-file read spent about as long faulting
 * in the fresh buffer's pages as copying the bytes (docs/performance.md).
 *
 * A piece of ASCII lines is decoded once, not line by line, and each line handed out
 * as a slice of it: on the bench's tracker that took the decode from ~75 to ~35 ms
 * (docs/performance.md, session 29).
 */
import {isAscii} from 'node:buffer'
import {readSync} from 'node:fs'
import {eachLine, hasBom, isBlankBytes, malformedError, MAX_LINE_BYTES} from './lines.js'
import {withTrackerFd} from './read-file.js'

// read 1 MiB at a time (64 KiB reads cost ~15 ms more in read calls at 100k beads), and
// decode pieces of about 64 KiB of whole lines: a string this small is made in V8's
// young generation, where a 1 MiB one gets pages of its own (faulted in, then freed);
// decoding 1 MiB at once cost about twice as much (docs/performance.md, session 29)
const CHUNK = 1 << 20
const PIECE = 1 << 16

/** What eachTrackerText hands out: a line's decoded text (no `\n`, no trailing `\r`) and its number. */
export type EachText = (text: string, n: number) => void

/**
 * Calls `each(text, lineNo)` for every non-blank line of `file`, as the strict parse
 * sees it: `text` is the line decoded from UTF-8 (invalid bytes as U+FFFD) without its
 * `\n` and without a trailing `\r` (RawLine.text); a byte order mark at the very start
 * is skipped; a line longer than MAX_LINE_BYTES bytes is refused as the strict parse
 * refuses it. `text` may be a slice of a longer string: keep what you parse from it, not
 * the text itself (that would keep the longer string). Returns false when the file does
 * not exist.
 */
export function eachTrackerText(file: string, each: EachText): boolean {
  const done = withTrackerFd(file, (fd) => {
    let buf = Buffer.allocUnsafe(CHUNK)
    // buf[0, len) holds bytes not yet handed out: the start of a line (or several)
    let len = 0
    let n = 1
    let fileStart = true
    for (;;) {
      if (len === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)], buf.length * 2)
      const got = readSync(fd, buf, len, buf.length - len, null)
      len += got
      // the whole lines read so far (at the end of the file, all that is left)
      const to = got === 0 ? len : buf.lastIndexOf(0x0a, len - 1) + 1
      if (to > 0) {
        for (let p = fileStart && hasBom(buf.subarray(0, to)) ? 3 : 0; p < to; ) {
          const q = pieceEnd(buf, p, to)
          n = chunkLines(file, buf, p, q, n, each)
          p = q
        }
        fileStart = false
        buf.copy(buf, 0, to, len)
        len -= to
      }
      if (got === 0) return true
      // an unfinished line longer than the limit is refused now, not read to its end
      const from = fileStart && hasBom(buf.subarray(0, len)) ? 3 : 0
      if (len - from > MAX_LINE_BYTES && !isBlankBytes(buf, from, len)) throw malformedError(file, n, `line longer than ${MAX_LINE_BYTES} bytes`)
    }
  })
  return done === true
}

/** The end of the piece of whole lines that starts at `p` (`to`: the end of the chunk's whole lines). */
function pieceEnd(buf: Buffer, p: number, to: number): number {
  if (p + PIECE >= to) return to
  const q = buf.lastIndexOf(0x0a, p + PIECE - 1) + 1
  if (q > p) return q
  // one line longer than a piece: up to its end
  const nl = buf.indexOf(0x0a, p + PIECE)
  return nl === -1 || nl >= to ? to : nl + 1
}

/**
 * The lines of `buf[from, to)` (whole lines: `to` is the end of the file or just after a
 * `\n`), numbered from `n`; returns the number of the line after the last.
 */
function chunkLines(file: string, buf: Buffer, from: number, to: number, n: number, each: EachText): number {
  // Only ASCII bytes: each byte is one UTF-16 unit whichever way it is decoded, so the
  // latin1 decode (a plain copy, ~4× faster than UTF-8's here; isAscii is simdutf's scan)
  // is the UTF-8 text, and byte offsets are string offsets. Any other byte: line by line.
  if (!isAscii(buf.subarray(from, to))) return lineByLine(file, buf, from, to, n, each)
  const s = buf.toString('latin1', from, to)
  // each line is a slice of `s` (a view, no copy); JSON.parse reads it in place
  let start = 0
  while (start < s.length) {
    let end = s.indexOf('\n', start)
    if (end === -1) end = s.length
    if (!isBlankBytes(buf, from + start, from + end)) {
      if (end - start > MAX_LINE_BYTES) throw malformedError(file, n, `line longer than ${MAX_LINE_BYTES} bytes`)
      each(s.slice(start, s.charCodeAt(end - 1) === 0x0d ? end - 1 : end), n)
    }
    n++
    start = end + 1
  }
  return n
}

/** A chunk with other bytes than ASCII: each line decoded from its own bytes, as the strict parse does. */
function lineByLine(file: string, buf: Buffer, from: number, to: number, n: number, each: EachText): number {
  return eachLine(buf, from, to, n, false, (start, end, line) => {
    if (end - start > MAX_LINE_BYTES) throw malformedError(file, line, `line longer than ${MAX_LINE_BYTES} bytes`)
    each(buf.toString('utf8', start, buf[end - 1] === 0x0d ? end - 1 : end), line)
  })
}
