/**
 * Session logs as the page reaches them (SPEC 22.1): only files directly inside the
 * project's `.helix-logs/`, never through a symlink (neither the directory nor the
 * file), only regular files, read-only. `LogIndex` keeps, per session log, where each
 * agent dispatch's records are (`LA–LB`), reading only what was appended since.
 */
import {closeSync, constants, fstatSync, lstatSync, openSync, read, readSync} from 'node:fs'
import {promisify} from 'node:util'
import path from 'node:path'
import {StringDecoder} from 'node:string_decoder'
import {renderLogLine} from '../output/log-render.js'

const LOG_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.(log|jsonl)$/

/** A file descriptor of `<logDir>/<name>` opened without following a link, or null (absent, a link, not a regular file). */
export function openLogFile(logDir: string, name: string): number | null {
  if (!LOG_NAME.test(name) || name.includes('..')) return null
  try {
    if (!lstatSync(logDir).isDirectory()) return null // a symlinked .helix-logs is refused too
  } catch {
    // no log directory: nothing to serve
    return null
  }
  let fd: number
  try {
    fd = openSync(path.join(logDir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch {
    // missing, a symlink (ELOOP) or unreadable: the same answer, not found
    return null
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd)
    return null
  }
  return fd
}

export interface DispatchSpan {
  dispatch: number
  action: string | null
  slot: number | null
  bead: string | null
  first: number
  last: number
  ended: boolean
  /** the agent's last non-blank output line in this dispatch (raw; the page shows it as text) */
  lastLine: string | null
}

/** The most a single refresh reads of one log (the rest comes on the next change). */
const CHUNK = 8 * 1024 * 1024

/** Where each dispatch of one session log lies, kept up to date incrementally. */
export class LogIndex {
  readonly spans = new Map<number, DispatchSpan>()
  #offset = 0
  #lines = 0
  #rest = ''
  #ino = -1
  #decoder = new StringDecoder('utf8')

  constructor(
    readonly logDir: string,
    readonly name: string,
  ) {}

  /** Reads what was appended since the last call. */
  refresh(): void {
    const fd = openLogFile(this.logDir, this.name)
    if (fd === null) return
    try {
      const st = fstatSync(fd)
      if (st.ino !== this.#ino || st.size < this.#offset) {
        // another file under the name, or truncated: start over
        this.spans.clear()
        this.#offset = 0
        this.#lines = 0
        this.#rest = ''
        this.#ino = st.ino
        this.#decoder = new StringDecoder('utf8')
      }
      while (this.#offset < st.size) {
        const buf = Buffer.alloc(Math.min(CHUNK, st.size - this.#offset))
        const n = readSync(fd, buf, 0, buf.length, this.#offset)
        if (n <= 0) break
        this.#offset += n
        const parts = (this.#rest + this.#decoder.write(buf.subarray(0, n))).split('\n')
        this.#rest = parts.pop() ?? ''
        for (const line of parts) this.#take(line)
        if (n === CHUNK) break
      }
    } finally {
      closeSync(fd)
    }
  }

  #take(line: string): void {
    const n = ++this.#lines
    if (!line.includes('"dispatch"')) return
    let r: Record<string, unknown>
    try {
      r = JSON.parse(line) as Record<string, unknown>
    } catch {
      // a torn or foreign line: not a record
      return
    }
    if (!r || typeof r !== 'object' || typeof r.dispatch !== 'number') return
    let s = this.spans.get(r.dispatch)
    if (!s) {
      s = {dispatch: r.dispatch, action: null, slot: null, bead: null, first: n, last: n, ended: false, lastLine: null}
      this.spans.set(r.dispatch, s)
    }
    s.last = n
    if (r.msg === 'dispatch' && typeof r.action === 'string') s.action = r.action
    if (typeof r.slot === 'number') s.slot = r.slot
    if (typeof r.bead === 'string') s.bead = r.bead
    if (r.msg === 'dispatch end') s.ended = true
    if (r.stream === 'agent' && typeof r.msg === 'string' && r.msg.trim() !== '') s.lastLine = r.msg.slice(0, 300)
  }

  /** Implementation dispatches in order. */
  implementations(): DispatchSpan[] {
    return [...this.spans.values()].filter((s) => s.action === 'implementation').sort((a, b) => a.dispatch - b.dispatch)
  }
}

const readAsync = promisify(read)

/**
 * Lines `from`..`to` of a session log, rendered as `helix logs --lines` renders them
 * (sanitized), or null when the file may not be served. Read 1 MB at a time with the
 * event loop free in between: a range near the end of a night's log of hundreds of MB
 * must not hold up every page's updates and every other request while it is found.
 */
export async function renderLogRange(logDir: string, name: string, from: number, to: number, slot: number | null): Promise<string | null> {
  const fd = openLogFile(logDir, name)
  if (fd === null) return null
  try {
    const size = fstatSync(fd).size
    const out: string[] = []
    const width = String(to).length + 1
    let n = 0
    let rest = ''
    let offset = 0
    const decoder = new StringDecoder('utf8')
    const take = (raw: string): boolean => {
      n++
      if (n < from) return true
      if (n > to) return false
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
      if (slot !== null && line.includes('"slot"')) {
        try {
          const rec = JSON.parse(line) as Record<string, unknown>
          if (typeof rec.slot === 'number' && rec.slot !== slot) return true
        } catch {
          // not JSON: shown as it is
        }
      }
      out.push(`${`L${n}`.padEnd(width)}  ${renderLogLine(line) ?? ''}`)
      return true
    }
    let going = true
    const buf = Buffer.alloc(1024 * 1024)
    while (going && offset < size) {
      const {bytesRead: got} = await readAsync(fd, buf, 0, Math.min(buf.length, size - offset), offset)
      if (got <= 0) break
      offset += got
      const text = rest + decoder.write(buf.subarray(0, got))
      // before the range, only the line breaks matter: count them without splitting
      let start = 0
      while (n + 1 < from) {
        const nl = text.indexOf('\n', start)
        if (nl < 0) break
        n++
        start = nl + 1
      }
      const parts = text.slice(start).split('\n')
      rest = parts.pop() ?? ''
      for (const p of parts) if (!(going = take(p))) break
    }
    if (going && rest !== '') take(rest)
    return out.length ? out.join('\n') + '\n' : ''
  } finally {
    closeSync(fd)
  }
}
