/**
 * `helix logs`: render session log records (pino JSON lines, SPEC 6.3; record
 * shape in docs/agents.md) for people. One line per record:
 *
 *   04:10:03 INFO  dispatch #1: implementation via codex
 *              │ agent output line …
 *   04:10:09 INFO  dispatch #1 end: rc=0, 1234 tokens, 6.1s
 *
 * Agent output (`stream: 'agent'`) is indented under its dispatch. Lines that
 * are not JSON are shown as they are. Control characters in the text are
 * replaced so a log cannot drive the terminal.
 */
import {closeSync, openSync, readdirSync, readSync, statSync} from 'node:fs'
import path from 'node:path'
import {hhmmss} from '../util/time.js'
import {sanitize} from '../util/sanitize.js'
import {abortableSleep} from '../util/abort.js'
import {HelixError, EXIT} from '../util/errors.js'
import {isNotFound} from '../util/files.js'

const LEVELS: Record<number, string> = {10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL'}
const SKIP_KEYS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v', 'stream', 'dispatch'])
const AGENT_INDENT = '           │ '

/** The one terminal sanitizer (SPEC 13.5): control and bidi characters → `?`, newline → `⏎`. */
function clean(text: string): string {
  return sanitize(text)
}

function clock(time: unknown): string {
  const t = typeof time === 'number' ? time : typeof time === 'string' ? Date.parse(time) : NaN
  if (Number.isNaN(t)) return '--:--:--'
  return hhmmss(new Date(t))
}

function levelName(level: unknown): string {
  if (typeof level === 'number') return LEVELS[level] ?? String(level)
  if (typeof level === 'string') return level.toUpperCase()
  return 'INFO'
}

/** Longest field value shown inline; longer or multi-line values are summarised. */
export const MAX_FIELD_CHARS = 200

function fieldText(v: unknown): string {
  if (typeof v === 'string') {
    if (v.length > MAX_FIELD_CHARS || v.includes('\n')) {
      const lines = v.split('\n').length
      return `<${v.length} chars${lines > 1 ? `, ${lines} lines` : ''}>`
    }
    return /\s|^$/.test(v) ? JSON.stringify(v) : v
  }
  const json = JSON.stringify(v) ?? String(v)
  return json.length > MAX_FIELD_CHARS ? json.slice(0, MAX_FIELD_CHARS - 1) + '…' : json
}

function extras(rec: Record<string, unknown>, skip: ReadonlySet<string> = new Set()): string {
  const parts: string[] = []
  for (const [k, v] of Object.entries(rec)) {
    if (SKIP_KEYS.has(k) || skip.has(k) || v === undefined) continue
    parts.push(`${k}=${fieldText(v)}`)
  }
  return parts.length ? '  ' + parts.join(' ') : ''
}

export interface RenderOptions {
  /** ANSI colours for levels and agent lines (the command enables it on a TTY without NO_COLOR) */
  color?: boolean
}

const SGR: Record<string, string> = {WARN: '\u001b[33m', ERROR: '\u001b[31m', FATAL: '\u001b[31m', DEBUG: '\u001b[2m', TRACE: '\u001b[2m'}
const DIM = '\u001b[2m'
const RESET = '\u001b[0m'

/** Colour a rendered line by its level (after sanitising, so the codes are ours only). */
function paint(line: string, level: string | 'agent', on: boolean | undefined): string {
  if (!on) return line
  if (level === 'agent') return DIM + line + RESET
  const c = SGR[level]
  return c ? c + line + RESET : line
}

/** Render one raw log line (without its newline). Returns null for blank lines. */
export function renderLogLine(raw: string, opts: RenderOptions = {}): string | null {
  const out = renderRecord(raw)
  if (out === null) return null
  return paint(out.text, out.level, opts.color)
}

function renderRecord(raw: string): {text: string; level: string} | null {
  if (raw.trim() === '') return null
  let rec: unknown
  try {
    rec = JSON.parse(raw)
  } catch {
    // not a JSON record (a torn or foreign line): show it as plain text
    return {text: clean(raw), level: 'INFO'}
  }
  if (!rec || typeof rec !== 'object' || Array.isArray(rec)) return {text: clean(raw), level: 'INFO'}
  const r = rec as Record<string, unknown>
  const msg = typeof r.msg === 'string' ? r.msg : r.msg === undefined ? '' : JSON.stringify(r.msg)
  if (r.stream === 'agent') {
    // a --workers log interleaves slots: name the slot in the gutter (SPEC 15.4)
    const indent = typeof r.slot === 'number' ? `${`w${r.slot}`.padStart(AGENT_INDENT.length - 3)} │ ` : AGENT_INDENT
    return {text: clean(indent + msg), level: 'agent'}
  }
  const lvl = levelName(r.level)
  const head = `${clock(r.time)} ${lvl.padEnd(5)} `
  if (msg === 'dispatch' && r.dispatch !== undefined) {
    const what = [r.action, r.agent].filter((x) => typeof x === 'string')
    const argv = Array.isArray(r.argv) ? `  argv=${JSON.stringify(r.argv)}` : ''
    return {text: clean(`${head}dispatch #${String(r.dispatch)}: ${what.length === 2 ? `${what[0]} via ${what[1]}` : what.join(' ')}${argv}${extras(r, new Set(['action', 'agent', 'argv']))}`), level: lvl}
  }
  if (msg === 'dispatch end' && r.dispatch !== undefined) {
    const bits = [`rc=${r.rc === undefined ? '?' : String(r.rc)}`]
    if (typeof r.tokens === 'number') bits.push(`${r.tokens.toLocaleString('en-US')} tokens`)
    if (typeof r.duration_ms === 'number') bits.push(`${(r.duration_ms / 1000).toFixed(1)}s`)
    if (r.timed_out === true) bits.push('TIMED OUT')
    return {text: clean(`${head}dispatch #${String(r.dispatch)} end: ${bits.join(', ')}${extras(r, new Set(['rc', 'tokens', 'duration_ms', 'timed_out']))}`), level: lvl}
  }
  const d = r.dispatch !== undefined ? `[#${String(r.dispatch)}] ` : ''
  return {text: clean(`${head}${d}${msg}${extras(r)}`), level: lvl}
}

/** Render a whole text (complete lines). */
export function renderLogText(text: string, opts: RenderOptions = {}): string {
  const out: string[] = []
  for (const line of text.split('\n')) {
    const r = renderLogLine(line.endsWith('\r') ? line.slice(0, -1) : line, opts)
    if (r !== null) out.push(r)
  }
  return out.length ? out.join('\n') + '\n' : ''
}

/**
 * Render a whole file by streaming it line by line (session logs of long runs
 * can be large). `write` returns false when the reader is gone (e.g. `| head`):
 * rendering stops then.
 */
export async function renderLogFile(file: string, write: (text: string) => boolean, opts: LineRenderOptions = {}): Promise<void> {
  const {createReadStream} = await import('node:fs')
  const {createInterface} = await import('node:readline')
  const stream = createReadStream(file)
  const rl = createInterface({input: stream, crlfDelay: Infinity})
  let batch: string[] = []
  try {
    for await (const line of rl) {
      if (opts.slot !== undefined && recordSlot(line) !== opts.slot) continue
      const r = renderLogLine(line, opts)
      if (r !== null) batch.push(r)
      if (batch.length >= 256) {
        if (!write(batch.join('\n') + '\n')) return
        batch = []
      }
    }
    if (batch.length) write(batch.join('\n') + '\n')
  } finally {
    rl.close()
    stream.destroy()
  }
}

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

/** The `slot` field of a session-log record (SPEC 15.4), or null for a line without one. */
function recordSlot(raw: string): number | null {
  // cheap pre-check: most lines of a one-worker log never mention a slot
  if (!raw.includes('"slot"')) return null
  try {
    const rec = JSON.parse(raw) as unknown
    if (!rec || typeof rec !== 'object' || Array.isArray(rec)) return null
    const v = (rec as Record<string, unknown>).slot
    return typeof v === 'number' && Number.isInteger(v) ? v : null
  } catch {
    return null
  }
}

export interface LineRenderOptions extends RenderOptions {
  /** print only the records carrying this `slot` (the others in the range are left out) */
  slot?: number
}

/**
 * Render the records on file lines `from`..`to` (1-based, split on `\n` exactly as
 * the pointers count them), each prefixed with its line number: `L12  04:10:03 INFO …`.
 * With `slot`, only that slot's records are printed (their line numbers kept).
 * Returns the number of lines the file has when it ends before `to`, else null.
 */
export async function renderLogLines(file: string, range: {from: number; to: number}, write: (text: string) => boolean, opts: LineRenderOptions = {}): Promise<number | null> {
  const {createReadStream} = await import('node:fs')
  const {StringDecoder} = await import('node:string_decoder')
  const stream = createReadStream(file, {highWaterMark: 256 * 1024})
  const decoder = new StringDecoder('utf8')
  const width = String(range.to).length + 1
  let n = 0
  let rest = ''
  let batch: string[] = []
  const take = (line: string): boolean => {
    n++
    if (n < range.from) return true
    if (n > range.to) return false
    const raw = line.endsWith('\r') ? line.slice(0, -1) : line
    if (opts.slot !== undefined && recordSlot(raw) !== opts.slot) return true
    const r = renderLogLine(raw, opts)
    batch.push(`${`L${n}`.padEnd(width)}  ${r ?? ''}`)
    if (batch.length >= 256) {
      const ok = write(batch.join('\n') + '\n')
      batch = []
      return ok
    }
    return true
  }
  try {
    let going = true
    for await (const chunk of stream) {
      const parts = (rest + decoder.write(chunk as Buffer)).split('\n')
      rest = parts.pop() ?? ''
      for (const line of parts) if (!(going = take(line))) break
      if (!going) break
    }
    if (going && rest !== '') take(rest + decoder.end())
    if (batch.length) write(batch.join('\n') + '\n')
  } finally {
    stream.destroy()
  }
  return n < range.to ? n : null
}

/** The newest `helix-*.log` in `logDir` (names carry the start time; mtime breaks ties), or null. */
export function newestSessionLog(logDir: string): string | null {
  let names: string[]
  try {
    names = readdirSync(logDir).filter((n) => /^helix-.*\.log$/.test(n))
  } catch (error) {
    // no log directory yet: no session logs. An unreadable one surfaces (it is not "no logs").
    if (isNotFound(error)) return null
    throw error
  }
  let best: {file: string; name: string; mtime: number} | null = null
  for (const name of names) {
    const file = path.join(logDir, name)
    let mtime = 0
    try {
      const st = statSync(file)
      if (!st.isFile()) continue
      mtime = st.mtimeMs
    } catch {
      // removed between readdir and stat: not a candidate
      continue
    }
    if (!best || name > best.name || (name === best.name && mtime > best.mtime)) best = {file, name, mtime}
  }
  return best?.file ?? null
}

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
