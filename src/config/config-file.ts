/**
 * Reading `.helix/config.json` without trusting what sits at that path: opened
 * O_NONBLOCK and fstat'ed before any byte is read, so a FIFO (which would block the
 * event loop, signal handlers included), a device behind a symlink (`/dev/zero`
 * never ends), a directory or a socket is refused at once; and a regular file over
 * CONFIG_MAX_BYTES is refused before it is read, so a stray 200 MB file costs nothing.
 */
import {closeSync, constants as FS, fstatSync, openSync, readSync} from 'node:fs'
import {HelixError, EXIT, errorMessage} from '../util/errors.js'

/** A config holds a few dozen short keys; 1 MiB is generous by three orders of magnitude. */
export const CONFIG_MAX_BYTES = 1024 * 1024

function refuse(file: string, msg: string): HelixError {
  return new HelixError(`${file}: ${msg}`, EXIT.ERROR)
}

const NOT_REGULAR = 'not a regular file (a FIFO, device, directory or socket, perhaps behind a symlink); replace it with a plain JSON file'

/**
 * The file's text, or null when it does not exist (a dangling symlink included).
 * Anything else that is not a regular file of at most `maxBytes` → one HelixError
 * naming the file and the problem (exit 1); nothing is written.
 */
export function readConfigText(file: string, maxBytes = CONFIG_MAX_BYTES): string | null {
  let fd: number
  try {
    fd = openSync(file, FS.O_RDONLY | FS.O_NONBLOCK | FS.O_NOCTTY)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return null
    // a socket cannot be opened (ENXIO), a symlink loop neither (ELOOP)
    if (code === 'ENXIO' || code === 'EISDIR' || code === 'ELOOP') throw refuse(file, NOT_REGULAR)
    throw refuse(file, `cannot read (${errorMessage(error)})`)
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw refuse(file, NOT_REGULAR)
    const tooBig = () => refuse(file, `larger than ${maxBytes} bytes, more than any config needs; check what was written there`)
    if (st.size > maxBytes) throw tooBig()
    // read at most maxBytes + 1: a file that grew after fstat is still caught, and never read whole
    const buf = Buffer.allocUnsafe(maxBytes + 1)
    let len = 0
    for (;;) {
      const n = readSync(fd, buf, len, buf.length - len, null)
      if (n === 0) break
      len += n
      if (len > maxBytes) throw tooBig()
    }
    return buf.subarray(0, len).toString('utf8')
  } catch (error) {
    if (error instanceof HelixError) throw error
    throw refuse(file, `cannot read (${errorMessage(error)})`)
  } finally {
    closeSync(fd)
  }
}
