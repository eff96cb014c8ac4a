/**
 * The tracker's lines read in chunks through one small buffer, for a reader that
 * keeps nothing of the bytes (`tracker ready`): the same lines, line numbers and
 * line-length refusal as eachLine over the whole file, without ever holding the
 * whole file. At 100k beads (69 MB) one whole-file read spent about as long faulting
 * in the fresh buffer's pages as copying the bytes (docs/performance.md).
 */
import {readSync} from 'node:fs'
import {eachLine, hasBom, isBlankBytes, malformedError, MAX_LINE_BYTES} from './lines.js'
import {withTrackerFd} from './read-file.js'

const CHUNK = 1 << 20

/**
 * Calls `each(buf, start, end, lineNo)` for every non-blank line of `file`, as eachLine
 * does: `buf[start, end)` is the line without its `\n` (a CRLF line keeps its `\r`), a
 * byte order mark at the very start is skipped, and a line longer than MAX_LINE_BYTES
 * is refused as the strict parse refuses it. `buf` is valid only during the call.
 * Returns false when the file does not exist.
 */
export function eachTrackerLine(file: string, each: (buf: Buffer, start: number, end: number, n: number) => void): boolean {
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
      // the whole lines read so far (at the end of the file, all that is left) go through
      // eachLine, which skips a byte order mark and blank lines and counts as a whole read does
      const to = got === 0 ? len : buf.lastIndexOf(0x0a, len - 1) + 1
      if (to > 0) {
        const view = buf.subarray(0, to)
        n = eachLine(view, 0, to, n, fileStart, (start, end, line) => {
          if (end - start > MAX_LINE_BYTES) throw malformedError(file, line, `line longer than ${MAX_LINE_BYTES} bytes`)
          each(view, start, end, line)
        })
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
