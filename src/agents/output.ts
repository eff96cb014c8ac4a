/**
 * Turning raw agent output into what people see and what helix parses
 * (SPEC 3: codex boilerplate condensed, claude stream-json decoded, tokens).
 *
 * Every decoder is fed one output line at a time and answers with
 *   log:  the lines to record in the session log (one record each)
 *   show: the condensed lines for the terminal (normal mode)
 * and accumulates the final text trailers are parsed from, plus the token count.
 */

import type {AgentHealth} from './types.js'
import {codexResetAt, CODEX_QUOTA, CODEX_UNAUTHORIZED, oneLineOf, quotaValueResetAt, ROOT_HINT, ROOT_REFUSAL, unixToIso, worseHealth} from './health.js'

export interface DecodedLine {
  log: string[]
  show: string[]
  /**
   * false for transient notices and start events (SPEC 14.1: codex `Reconnecting`,
   * `thread.started`, rate-limit events with status `allowed`): they do not reset
   * the stall guard (14.4). undefined counts as progress.
   */
  progress?: boolean
}

/** What the whole output said about the attempt and the agent (SPEC 14.1). */
export interface DecoderVerdict {
  health: AgentHealth
  /** the output says the attempt failed whatever the exit code (claude is_error, codex turn.failed) */
  failed: boolean
  /** the agent's own error text, else the last non-blank output line; null when none */
  failureLine: string | null
  costUsd: number
  /** false when the agent reported no token count */
  tokensReported: boolean
  /** the last output line that counted as progress (status shows it); null when none */
  lastLine?: string | null
}

export interface OutputDecoder {
  push(line: string): DecodedLine
  /** the text trailers are read from */
  text(): string
  tokens(): number
  /** SPEC 14.1 verdict, read once the output has ended */
  verdict?(): DecoderVerdict
}

const TEXT_CAP = 4 * 1024 * 1024

class TextBuffer {
  private parts: string[] = []
  private size = 0
  add(line: string): void {
    this.parts.push(line)
    this.size += line.length + 1
    if (this.size > TEXT_CAP * 2) {
      // keep the tail: trailers come last
      const joined = this.parts.join('\n').slice(-TEXT_CAP)
      this.parts = [joined]
      this.size = joined.length
    }
  }
  toString(): string {
    return this.parts.join('\n')
  }
}

/** `1,234` → 1234; anything but digits and group commas → undefined. */
export function parseTokenCount(text: string): number | undefined {
  const t = text.trim()
  if (!/^\d{1,3}(,\d{3})+$|^\d+$/.test(t)) return undefined
  return Number(t.replace(/,/g, ''))
}


export interface DecoderOptions {
  /** the clock for relative reset times (`try again in 2s`, `QUOTA 90`) */
  now?: () => Date
}

const OK: AgentHealth = {kind: 'ok'}

/**
 * What every decoder tracks for its verdict: health (the worst seen), the
 * agent's own error text, the last progress line and the last transient line.
 */
/** token and cost trailers, and codex's `tokens used` footer with its count */
const ACCOUNTING_LINE = /^[\s*`#>]*(?:(?:TOKENS_USED|COST_USD)[*`]*\s*:.*|tokens used\s*:?.*|[\d,.]+)\s*$/i

class Verdicts {
  health: AgentHealth = OK
  failed = false
  errorLine: string | null = null
  lastProgress: string | null = null
  lastTransient: string | null = null
  costUsd = 0
  tokensReported = false

  see(h: AgentHealth): void {
    // two quota signals (claude's rate_limit_event, then its 429 result): keep the one with a reset
    if (h.kind === 'quota' && this.health.kind === 'quota' && this.health.resetAt === null && h.resetAt !== null) this.health = h
    else this.health = worseHealth(this.health, h)
  }

  /** note what a pushed line produced */
  track(d: DecodedLine): DecodedLine {
    // progress: what the operator saw (not helix's own bookkeeping lines); transient: anything
    const lines = d.progress === false ? (d.show.length > 0 ? d.show : d.log) : d.show
    for (let i = lines.length - 1; i >= 0; i--) {
      // blank lines and helix's own markers (`[claude result: success, is_error]`) are not what the agent said
      if (lines[i].trim() === '' || /^\[(?:claude|codex) [^\]]*\]$/.test(lines[i])) continue
      // nor is accounting: a `TOKENS_USED: N` / `COST_USD: X` trailer or a bare token count (codex's
      // `tokens used` footer) would make every fast, unfinished attempt end on "the same line" (SPEC 14.2)
      if (ACCOUNTING_LINE.test(lines[i])) continue
      if (d.progress === false) this.lastTransient = oneLineOf(lines[i])
      else this.lastProgress = oneLineOf(lines[i])
      break
    }
    return d
  }

  verdict(): DecoderVerdict {
    return {
      health: this.health,
      failed: this.failed,
      failureLine: this.errorLine ?? this.lastProgress ?? this.lastTransient,
      costUsd: this.costUsd,
      tokensReported: this.tokensReported,
      lastLine: this.lastProgress,
    }
  }
}

function parseJsonObject(line: string): Record<string, any> | undefined {
  const t = line.trim()
  if (!t.startsWith('{')) return undefined
  try {
    const v = JSON.parse(t)
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, any>) : undefined
  } catch {
    // not JSON: the caller treats the line as plain text
    return undefined
  }
}

// ---------------------------------------------------------------- command agent

const TRAILER_EDGE = /^[\s*`#>]*|[\s*`]*$/g
const STATUS_LINE = /^HELIX_AGENT_STATUS\s*:\s*(UNAVAILABLE|QUOTA)\b\s*(.*)$/i
const TOKENS_LINE = /^TOKENS_USED\s*:\s*([\d,]+)$/
const COST_LINE = /^COST_USD\s*:\s*\$?(\d+(?:\.\d+)?)$/

/**
 * The command agent: output is shown and logged verbatim; every line is
 * progress. `TOKENS_USED: N` and `COST_USD: X` trailers count (the last of each,
 * like every trailer, SPEC 3.2). A `HELIX_AGENT_STATUS: UNAVAILABLE <reason>` or
 * `HELIX_AGENT_STATUS: QUOTA <ISO time | seconds>` line counts when it is the last
 * line, or only other trailers (tokens, cost, status) and blank lines follow it.
 */
export function commandDecoder(opts: DecoderOptions = {}): OutputDecoder {
  const now = opts.now ?? (() => new Date())
  const text = new TextBuffer()
  const v = new Verdicts()
  let tokens = 0
  let status: {health: AgentHealth; line: string} | null = null
  return {
    push(line) {
      text.add(line)
      const bare = line.replace(TRAILER_EDGE, '')
      const tok = TOKENS_LINE.exec(bare)
      const cost = COST_LINE.exec(bare)
      const st = STATUS_LINE.exec(bare)
      if (tok) {
        const n = parseTokenCount(tok[1])
        if (n !== undefined) {
          tokens = n
          v.tokensReported = true
        }
      } else if (cost) {
        v.costUsd = Number(cost[1])
      } else if (st) {
        const arg = st[2].trim()
        const health: AgentHealth =
          st[1].toUpperCase() === 'UNAVAILABLE'
            ? {kind: 'unavailable', reason: oneLineOf(arg) || 'the agent says it is unavailable'}
            : {kind: 'quota', resetAt: quotaValueResetAt(arg, now()), message: oneLineOf(bare)}
        status = {health, line: oneLineOf(bare)}
      } else if (bare !== '') {
        status = null // real output after the status line: it was not the last word
      }
      return v.track({log: [line], show: [line], progress: true})
    },
    text: () => text.toString(),
    tokens: () => tokens,
    verdict() {
      const out = v.verdict()
      if (status) {
        out.health = status.health
        out.failureLine = status.health.kind === 'unavailable' ? status.health.reason : status.line
      }
      return out
    },
  }
}

// ------------------------------------------------------------------------ codex

const CODEX_SECTIONS = new Set(['user', 'thinking', 'exec', 'codex', 'tokens used'])
const CODEX_OLD_STAMP = /^\[\d{4}-\d{2}-\d{2}T[^\]]*\]\s*(.*)$/
/** a text-mode line that reports an error (`ERROR: …`, `[ts] ERROR: …`, `error: …`) */
const CODEX_ERROR_LINE = /^(?:\[[^\]]*\]\s*)?(?:error|fatal)\b/i
/**
 * codex's own diagnostics on stderr, measured with 0.169.0 offline: tracing lines
 * (`2026-…Z ERROR codex_api::…: failed to connect …`, every ~5 s while it
 * reconnects), `WARNING: proceeding, even though …` and `Reading additional input
 * from stdin...`. Logged, never progress (they would keep a hung codex alive
 * under the stall guard).
 */
const CODEX_TRACING = /^\d{4}-\d{2}-\d{2}T[\d:.]+Z?\s+(ERROR|WARN|INFO|DEBUG|TRACE)\s+\S+?:\s*(.*)$/
const CODEX_NOTICE = /^(?:WARNING:|Reading additional input from stdin)/

/**
 * codex's text mode (stubs, builds before `--json`): a banner (`OpenAI Codex vX`
 * … between two `--------` lines), the echoed prompt (`user` section), then
 * `thinking` / `exec` / `codex` sections and a `tokens used` footer followed by
 * the count. The condensed view drops the banner, the echoed prompt and the token
 * footer; the trailer text is the condensed view (so trailer examples quoted in
 * the prompt never count). Everything is logged verbatim.
 */
function codexTextMachine(text: TextBuffer, onTokens: (n: number) => void): (line: string) => DecodedLine {
  let state: 'start' | 'title' | 'banner' | 'prompt' | 'body' | 'tokens' = 'start'
  let promptSeen = false
  return (line) => {
    const trimmed = line.trim()
    const stamped = CODEX_OLD_STAMP.exec(trimmed)
    const marker = (stamped ? stamped[1] : trimmed).toLowerCase()
    const dashes = /^-{4,}$/.test(trimmed)

    // banner: `OpenAI Codex vX`, `--------`, `key: value` lines, `--------`
    if (state === 'start' && /^openai codex\b/i.test(marker)) {
      state = 'title'
      return {log: [line], show: [], progress: false}
    }
    if (state === 'title' || (state === 'start' && dashes)) {
      if (dashes) state = 'banner'
      return {log: [line], show: [], progress: false}
    }
    if (state === 'banner') {
      if (dashes) state = 'body'
      return {log: [line], show: [], progress: false}
    }
    if (state === 'tokens') {
      state = 'body'
      const n = parseTokenCount(trimmed)
      if (n !== undefined) {
        onTokens(n)
        return {log: [line], show: []}
      }
    }
    const oneLine = /^tokens used:?\s*([\d,]+)$/.exec(marker)
    if (oneLine) {
      const n = parseTokenCount(oneLine[1])
      if (n !== undefined) onTokens(n)
      return {log: [line], show: []}
    }
    if (marker === 'tokens used' || marker === 'tokens used:') {
      state = 'tokens'
      return {log: [line], show: []}
    }
    if (!promptSeen && (marker === 'user' || marker === 'user instructions:')) {
      // only the first `user` section is the echoed prompt; a later line
      // reading `user` is the agent's own output
      promptSeen = true
      state = 'prompt'
      return {log: [line], show: [], progress: false}
    }
    if (state === 'prompt') {
      if (CODEX_SECTIONS.has(marker)) state = 'body'
      else return {log: [line], show: [], progress: false} // the echoed prompt
    }
    if (state === 'start') state = 'body'
    text.add(line)
    return {log: [line], show: [line]}
  }
}

function codexItemLine(item: Record<string, any>): string | null {
  switch (item.type) {
    case 'command_execution': {
      const code = typeof item.exit_code === 'number' ? ` (exit ${item.exit_code})` : item.status === 'failed' ? ' (failed)' : ''
      return `⏺ $ ${oneLine(String(item.command ?? ''))}${code}`
    }
    case 'file_change': {
      const changes = Array.isArray(item.changes) ? item.changes : []
      const what = changes.map((c: any) => `${String(c?.kind ?? 'edit')} ${String(c?.path ?? '?')}`).join(', ')
      return `⏺ ${oneLine(what || 'file change')}`
    }
    case 'mcp_tool_call':
      return `⏺ ${oneLine(`${String(item.server ?? 'mcp')}.${String(item.tool ?? 'tool')}`)}`
    case 'web_search':
      return `⏺ search ${oneLine(String(item.query ?? ''))}`
    default:
      return null
  }
}

/**
 * codex `exec --json` (SPEC 14.1): one JSON event per line.
 * - `thread.started` / `turn.started`: start events, logged, not progress;
 * - `item.completed` `agent_message`: the final text (shown, trailers are read from it);
 *   `command_execution`, `file_change` (also MCP calls, web searches): one shown line each;
 *   `reasoning`: logged; an item of type `error`: a transient notice;
 * - `turn.completed.usage`: tokens (input + output) summed;
 * - `turn.failed`, and an `error` event not followed by a completed turn: a failed
 *   attempt with that message; an `error` beginning `Reconnecting`: a transient notice;
 * - usage-limit text → quota (reset from `try again at/in …`); `401`, `Unauthorized`,
 *   `Not logged in` in an error → unavailable.
 * Lines that are not JSON go through the text-mode reader (banner, `tokens used` footer).
 */
export function codexDecoder(opts: DecoderOptions = {}): OutputDecoder {
  const now = opts.now ?? (() => new Date())
  const text = new TextBuffer()
  const v = new Verdicts()
  let tokens = 0
  let pendingError: string | null = null
  let turnFailed: string | null = null
  const textLine = codexTextMachine(text, (n) => {
    tokens = n
    v.tokensReported = true
  })

  /** health from an error message (error event, turn.failed, a text-mode error line) */
  const judge = (message: string, errorContext: boolean) => {
    if (CODEX_QUOTA.test(message)) v.see({kind: 'quota', resetAt: codexResetAt(message, now()), message: oneLineOf(message)})
    else if (errorContext && CODEX_UNAUTHORIZED.test(message)) v.see({kind: 'unavailable', reason: oneLineOf(message)})
  }

  const event = (e: Record<string, any>, raw: string): DecodedLine => {
    switch (e.type) {
      case 'thread.started':
        return {log: [`[codex thread.started]${typeof e.thread_id === 'string' ? ` thread=${oneLine(e.thread_id, 80)}` : ''}`], show: [], progress: false}
      case 'turn.started':
        return {log: ['[codex turn.started]'], show: [], progress: false}
      case 'turn.completed': {
        const u = e.usage ?? {}
        tokens += (Number(u.input_tokens) || 0) + (Number(u.output_tokens) || 0)
        if (e.usage && typeof e.usage === 'object') v.tokensReported = true
        pendingError = null // an error before a completed turn was not the last word
        return {log: [`[codex turn.completed] input=${Number(u.input_tokens) || 0} output=${Number(u.output_tokens) || 0}`], show: []}
      }
      case 'turn.failed': {
        const msg = oneLineOf(String(e.error?.message ?? e.message ?? 'turn failed'))
        turnFailed = msg
        judge(msg, true)
        const l = `[codex turn failed] ${msg}`
        return {log: [l], show: [l]}
      }
      case 'error': {
        const msg = oneLineOf(String(e.message ?? e.error?.message ?? 'error'))
        // `Reconnecting... 2/5 (…)` (0.169.0); older builds said `stream error: …; retrying 1/5 in 201ms…`
        if (/^reconnecting|\bretrying \d+\/\d+/i.test(msg)) return {log: [`[codex] ${msg}`], show: [], progress: false}
        pendingError = msg
        judge(msg, true)
        const l = `[codex error] ${msg}`
        return {log: [l], show: [l]}
      }
      case 'item.started':
      case 'item.updated':
      case 'item.completed': {
        const item = e.item && typeof e.item === 'object' ? (e.item as Record<string, any>) : {}
        if (item.type === 'error') {
          const msg = oneLineOf(String(item.message ?? 'error'))
          judge(msg, true)
          return {log: [`[codex notice] ${msg}`], show: [], progress: false}
        }
        if (e.type !== 'item.completed') {
          if (e.type === 'item.started' && item.type === 'command_execution') return {log: [`$ ${oneLine(String(item.command ?? ''))}`], show: []}
          return {log: [], show: []} // still progress: the agent is working
        }
        if (item.type === 'agent_message' && typeof item.text === 'string') {
          const lines = splitLines(item.text)
          for (const l of lines) text.add(l)
          return {log: lines, show: lines}
        }
        if (item.type === 'reasoning' && typeof item.text === 'string') return {log: [`[thinking] ${oneLine(item.text)}`], show: []}
        const l = codexItemLine(item)
        if (l) {
          const log = [l]
          if (item.type === 'command_execution' && typeof item.aggregated_output === 'string' && item.aggregated_output.trim() !== '') log.push(`  ⎿ ${oneLine(item.aggregated_output, 160)}`)
          return {log, show: [l]}
        }
        return {log: [`[codex ${oneLine(String(item.type ?? 'item'), 40)}]`], show: []}
      }
      default:
        return {log: [oneLine(raw, 400)], show: []}
    }
  }

  return {
    push(raw) {
      const e = parseJsonObject(raw)
      if (e && typeof e.type === 'string') return v.track(event(e, raw))
      const trimmed = raw.trim()
      const tracing = CODEX_TRACING.exec(trimmed)
      if (tracing) {
        if (tracing[1] === 'ERROR') judge(tracing[2], true)
        return v.track({log: [raw], show: [], progress: false})
      }
      if (CODEX_NOTICE.test(trimmed)) return v.track({log: [raw], show: /^WARNING:/.test(trimmed) ? [raw] : [], progress: false})
      const d = textLine(raw)
      // body lines: usage-limit text anywhere; unauthorized only on error lines
      const isError = CODEX_ERROR_LINE.test(raw.trim())
      if (d.show.length > 0 || isError) judge(raw.trim().replace(/^\[[^\]]*\]\s*/, '').replace(/^(?:error|fatal)\s*:?\s*/i, ''), isError)
      return v.track(d)
    },
    text: () => text.toString(),
    tokens: () => tokens,
    verdict() {
      const out = v.verdict()
      const err = turnFailed ?? pendingError
      if (err) {
        out.failed = true
        out.failureLine = err
      }
      return out
    },
  }
}

// ----------------------------------------------------------------------- claude

function oneLine(s: string, max = 240): string {
  const flat = s.replace(/\s*\r?\n\s*/g, ' ⏎ ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}

function summarizeToolInput(input: unknown): string {
  if (!input || typeof input !== 'object') return input === undefined ? '' : oneLine(String(input))
  const o = input as Record<string, unknown>
  for (const key of ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description', 'prompt']) {
    if (typeof o[key] === 'string') return oneLine(o[key] as string)
  }
  try {
    return oneLine(JSON.stringify(o))
  } catch {
    // a cycle or BigInt in agent JSON: the summary line stays empty rather than crashing the decoder
    return ''
  }
}

function splitLines(s: string): string[] {
  const lines = s.split(/\r?\n/)
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines
}

const CLAUDE_LOGGED_OUT = /not logged in|invalid api key/i

/**
 * claude `--output-format stream-json --verbose`: one JSON event per line.
 * - `system`: logged as one short line, not shown; `init` (a start event) and
 *   `api_retry` (claude offline retries with backoff) are not progress
 * - `assistant` text: logged and shown; `tool_use`: one line `⏺ Tool(summary)`;
 *   an `error` field `authentication_failed` (or `Not logged in` text with an error)
 *   → unavailable; `billing_error` → unavailable; `rate_limit` → quota
 * - `user` tool results: one short `⎿` line in the log only
 * - `rate_limit_event`: not progress; status `rejected` → quota until `resetsAt`
 * - `result`: the final text (trailers are read from it), `usage` (tokens = input +
 *   output + cache creation + cache reads) and `total_cost_usd`; `is_error` → a
 *   failed attempt whose failure line is the result text; `api_error_status` 429 →
 *   quota. The result text is shown only when it differs from the last assistant text.
 * A line that is not JSON is logged and shown as it is; the root refusal
 * (`--dangerously-skip-permissions cannot be used with root/sudo privileges`) → unavailable.
 */
export function claudeDecoder(opts: DecoderOptions = {}): OutputDecoder {
  void opts
  const assistantText = new TextBuffer()
  const v = new Verdicts()
  let resultText: string | undefined
  let lastAssistant = ''
  let tokens = 0
  const decode = (line: string): DecodedLine => {
    const t = line.trim()
    const e = parseJsonObject(line)
    if (!e) {
      if (t === '') return {log: [], show: []}
      if (t.startsWith(ROOT_REFUSAL)) {
        v.see({kind: 'unavailable', reason: `${oneLineOf(t)}; ${ROOT_HINT}`})
        v.errorLine = oneLineOf(t)
      } else if (/^(?:error:\s*)?(?:not logged in|invalid api key)/i.test(t)) {
        v.see({kind: 'unavailable', reason: oneLineOf(t)})
        v.errorLine = oneLineOf(t)
      }
      assistantText.add(line)
      return {log: [line], show: [line]}
    }
    const out: DecodedLine = {log: [], show: []}
    switch (e.type) {
      case 'system': {
        const bits = [`[claude ${String(e.subtype ?? 'system')}]`]
        if (typeof e.model === 'string') bits.push(`model=${e.model}`)
        if (typeof e.attempt === 'number') bits.push(`attempt=${e.attempt}/${Number(e.max_retries) || '?'}`, `error=${oneLine(String(e.error_status ?? e.error ?? '?'), 40)}`)
        else if (typeof e.session_id === 'string') bits.push(`session=${e.session_id}`)
        out.log.push(bits.join(' '))
        // start event; `api_retry` is claude's reconnect notice (measured offline with 2.1.197)
        if (e.subtype === 'init' || e.subtype === 'api_retry') out.progress = false
        break
      }
      case 'assistant': {
        const content = Array.isArray(e.message?.content) ? e.message.content : []
        let said = ''
        for (const c of content) {
          if (c?.type === 'text' && typeof c.text === 'string') {
            const lines = splitLines(c.text)
            for (const l of lines) assistantText.add(l)
            lastAssistant = c.text.trim()
            said += c.text
            out.log.push(...lines)
            out.show.push(...lines)
          } else if (c?.type === 'tool_use') {
            const l = `⏺ ${String(c.name ?? 'tool')}(${summarizeToolInput(c.input)})`
            out.log.push(l)
            out.show.push(l)
          }
        }
        if (typeof e.error === 'string' && e.error !== '') {
          const why = oneLineOf(said) || e.error.replace(/_/g, ' ')
          if (e.error === 'authentication_failed' || e.error === 'billing_error' || CLAUDE_LOGGED_OUT.test(said)) v.see({kind: 'unavailable', reason: why})
          else if (e.error === 'rate_limit') v.see({kind: 'quota', resetAt: null, message: why})
          v.errorLine = why
        }
        break
      }
      case 'user': {
        const content = Array.isArray(e.message?.content) ? e.message.content : []
        for (const c of content) {
          if (c?.type !== 'tool_result') continue
          const body = typeof c.content === 'string' ? c.content : Array.isArray(c.content) ? c.content.map((x: any) => (typeof x?.text === 'string' ? x.text : '')).join(' ') : ''
          out.log.push(`  ⎿ ${c.is_error ? '(error) ' : ''}${oneLine(body, 160)}`)
        }
        break
      }
      case 'rate_limit_event': {
        const info = e.rate_limit_info && typeof e.rate_limit_info === 'object' ? e.rate_limit_info : {}
        const status = String(info.status ?? '')
        const kind = typeof info.rateLimitType === 'string' ? ` (${oneLine(info.rateLimitType, 40)})` : ''
        out.log.push(`[claude rate limit: ${oneLine(status, 40) || 'unknown'}${kind}]`)
        out.progress = false
        if (status === 'rejected') {
          const resetAt = unixToIso(info.resetsAt)
          v.see({kind: 'quota', resetAt, message: `claude usage limit reached${kind}${resetAt ? `, resets ${resetAt}` : ''}`})
        }
        break
      }
      case 'result': {
        const u = e.usage && typeof e.usage === 'object' ? e.usage : undefined
        if (u) {
          v.tokensReported = true
          for (const k of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens']) tokens += Number(u[k]) || 0
        }
        const cost = Number(e.total_cost_usd)
        if (Number.isFinite(cost) && cost > 0) v.costUsd += cost
        if (typeof e.result === 'string') {
          resultText = e.result
          const lines = splitLines(e.result)
          out.log.push(...lines)
          if (e.result.trim() !== lastAssistant) out.show.push(...lines)
        }
        const said = typeof e.result === 'string' ? oneLineOf(e.result) : ''
        if (e.is_error === true) {
          v.failed = true
          v.errorLine = said || String(e.subtype ?? 'error')
          if (CLAUDE_LOGGED_OUT.test(said)) v.see({kind: 'unavailable', reason: said})
        }
        if (Number(e.api_error_status) === 429) v.see({kind: 'quota', resetAt: null, message: said || 'claude API error 429 (rate limited)'})
        if (e.is_error || (typeof e.subtype === 'string' && e.subtype !== 'success')) {
          const l = `[claude result: ${String(e.subtype ?? 'error')}${e.is_error ? ', is_error' : ''}]`
          out.log.push(l)
          out.show.push(l)
        }
        break
      }
      default:
        break
    }
    return out
  }
  return {
    push: (line) => v.track(decode(line)),
    text: () => (resultText !== undefined ? resultText : assistantText.toString()),
    tokens: () => tokens,
    verdict: () => v.verdict(),
  }
}
