/** Agent output → lines, in linear time with bounded memory (SPEC 14.5). */

/** A line longer than this is cut in the session log and for the decoder (SPEC 14.5). */
export const MAX_LINE_BYTES = 1024 * 1024

export interface LineSplitter {
  push(chunk: Buffer): void
  /** the unterminated rest, if any */
  end(): void
}

/**
 * Split a byte stream into lines in linear time with bounded memory: at most
 * `maxBytes` of one line are kept, the rest is counted and the line is handed
 * on as `<kept>…[cut N bytes]` (never cutting a UTF-8 sequence in half). A
 * trailing CR is dropped. '\n' never occurs inside a UTF-8 sequence, so each
 * line decodes on its own.
 */
export function createLineSplitter(onLine: (line: string) => void, maxBytes = MAX_LINE_BYTES): LineSplitter {
  let parts: Buffer[] = []
  let kept = 0
  let cut = 0
  let pending = false
  const append = (b: Buffer) => {
    if (b.length === 0) return
    pending = true
    const room = maxBytes - kept
    if (room <= 0) {
      cut += b.length
      return
    }
    const take = b.length <= room ? b : b.subarray(0, room)
    // copy small slices so a kept byte never pins a whole 64 KiB chunk
    parts.push(take.length * 2 < take.buffer.byteLength ? Buffer.from(take) : take)
    kept += take.length
    cut += b.length - take.length
  }
  const emit = () => {
    let buf = parts.length === 1 ? parts[0] : Buffer.concat(parts, kept)
    let extra = 0
    if (cut > 0) {
      // back off to a character boundary: drop a trailing partial UTF-8 sequence
      let i = buf.length - 1
      let back = 0
      while (i >= 0 && back < 3 && (buf[i] & 0xc0) === 0x80) {
        i--
        back++
      }
      if (i >= 0 && buf[i] >= 0xc0) {
        const need = buf[i] >= 0xf0 ? 4 : buf[i] >= 0xe0 ? 3 : 2
        if (back + 1 < need) extra = back + 1
      }
      if (extra) buf = buf.subarray(0, buf.length - extra)
    } else if (buf.length > 0 && buf[buf.length - 1] === 13) buf = buf.subarray(0, buf.length - 1)
    const text = buf.toString('utf8')
    const line = cut > 0 ? `${text}…[cut ${cut + extra} bytes]` : text
    parts = []
    kept = 0
    cut = 0
    pending = false
    onLine(line)
  }
  return {
    push(chunk) {
      let start = 0
      for (;;) {
        const nl = chunk.indexOf(10, start)
        if (nl < 0) {
          append(chunk.subarray(start))
          return
        }
        append(chunk.subarray(start, nl))
        pending = true
        emit()
        start = nl + 1
      }
    },
    end() {
      if (pending) emit()
    },
  }
}
