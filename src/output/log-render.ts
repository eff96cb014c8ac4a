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
 *
 * The rest of `helix logs` lives beside it: log-args.ts (`--lines`, `--slot`),
 * log-lookup.ts (the newest session log), log-follow.ts (`--follow`).
 */
import {hhmmss} from '../util/time.js'
import {sanitize} from '../util/sanitize.js'
import {groupDigits} from '../util/numbers.js'

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
    if (typeof r.tokens === 'number') bits.push(`${groupDigits(r.tokens)} tokens`)
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

/** The `slot` field of a session-log record (SPEC 15.4), or null for a line without one. */
export function recordSlot(raw: string): number | null {
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

