// `helix logs --follow`: read what is appended to a session log and render it as it comes.
import {closeSync, openSync, readSync, statSync} from 'node:fs'
import path from 'node:path'
import {abortableSleep} from '../util/abort.js'
import {recordSlot, renderLogLine} from './log-render.js'
import {newestSessionLog} from './log-lookup.js'

/**
 * Incremental reader for --follow: returns newly completed lines since the last
 * call (a partial last line waits for its newline). Handles truncation by
 * starting over.
 */
export class LogTail {
  private offset = 0
  private partial = ''

  constructor(readonly file: string) {}

  readNew(): string[] {
    let size: number
    try {
      size = statSync(this.file).size
    } catch {
      // --follow: the log is not there (yet, or rotated away): nothing new to show this tick
      return []
    }
    if (size < this.offset) {
      this.offset = 0
      this.partial = ''
    }
    if (size === this.offset) return []
    const fd = openSync(this.file, 'r')
    const chunks: Buffer[] = []
    try {
      let pos = this.offset
      const buf = Buffer.alloc(Math.min(1 << 20, size - pos))
      while (pos < size) {
        const n = readSync(fd, buf, 0, Math.min(buf.length, size - pos), pos)
        if (n <= 0) break
        chunks.push(Buffer.from(buf.subarray(0, n)))
        pos += n
      }
      this.offset = pos
    } finally {
      closeSync(fd)
    }
    // decode at line boundaries only, so a UTF-8 sequence split across reads is never garbled
    const data = Buffer.concat(chunks)
    const lastNl = data.lastIndexOf(0x0a)
    if (lastNl === -1) {
      this.partial += data.toString('latin1')
      return []
    }
    const complete = Buffer.concat([Buffer.from(this.partial, 'latin1'), data.subarray(0, lastNl)]).toString('utf8')
    this.partial = data.subarray(lastNl + 1).toString('latin1')
    return complete.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
  }
}

export interface FollowOptions {
  file: string
  /** when set, switch to a newer `helix-*.log` appearing in this directory */
  logDir?: string
  write: (text: string) => void
  signal: AbortSignal
  pollMs?: number
  color?: boolean
  /** only this slot's records (SPEC 15.4) */
  slot?: number
}

/** Print the file, then keep printing what is appended until `signal` aborts. */
export async function followLog(opts: FollowOptions): Promise<void> {
  let tail = new LogTail(opts.file)
  const pollMs = opts.pollMs ?? 250
  const emit = (lines: string[]) => {
    const mine = opts.slot === undefined ? lines : lines.filter((l) => recordSlot(l) === opts.slot)
    const out = mine.map((l) => renderLogLine(l, {color: opts.color})).filter((l): l is string => l !== null)
    if (out.length) opts.write(out.join('\n') + '\n')
  }
  emit(tail.readNew())
  while (!opts.signal.aborted) {
    await abortableSleep(pollMs, opts.signal)
    emit(tail.readNew())
    if (opts.logDir) {
      const newest = newestSessionLog(opts.logDir)
      if (newest && newest !== tail.file && path.basename(newest) > path.basename(tail.file)) {
        emit(tail.readNew())
        opts.write(`── ${newest} ──\n`)
        tail = new LogTail(newest)
        emit(tail.readNew())
      }
    }
  }
}
