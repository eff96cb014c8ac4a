/**
 * The tracker's lines read in chunks through one small buffer, for a reader that
 * keeps nothing of the bytes (`tracker ready`): the same lines, line numbers and
 * line-length refusal as eachLine over the whole file, without ever holding the
 * whole file. At 100k beads (69 MB) one whole-file read spent about as long faulting
 * in the fresh buffer's pages as copying the bytes (docs/performance.md).
 */
import {readSync} from 'node:fs'
import {hasBom, isBlankBytes, malformedError, MAX_LINE_BYTES} from './lines.js'
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
    let atFileStart = true
    let eof = false
    while (!eof) {
      if (len === buf.length) buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)], buf.length * 2)
      const got = readSync(fd, buf, len, buf.length - len, null)
      eof = got === 0
      len += got
      let start = 0
      if (atFileStart && (len >= 3 || eof)) {
        atFileStart = false
        if (hasBom(buf.subarray(0, len))) start = 3
      }
      if (atFileStart) continue
      const view = buf.subarray(0, len)
      while (start < len) {
        let end = view.indexOf(0x0a, start)
        if (end === -1) {
          if (!eof) break
          end = len
        }
        if (!isBlankBytes(buf, start, end)) {
          if (end - start > MAX_LINE_BYTES) throw malformedError(file, n, `line longer than ${MAX_LINE_BYTES} bytes`)
          each(buf, start, end, n)
        }
        n++
        start = end + 1
      }
      if (eof) break
      // an unfinished line longer than the limit is refused now, not read to its end
      if (len - start > MAX_LINE_BYTES && !isBlankBytes(buf, start, len)) throw malformedError(file, n, `line longer than ${MAX_LINE_BYTES} bytes`)
      buf.copy(buf, 0, start, len)
      len -= start
    }
    return true
  })
  return done === true
}
