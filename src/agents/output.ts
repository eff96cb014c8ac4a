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

// ---------------------------------------------------------------- command agent

/** The command agent: output is shown and logged verbatim; `TOKENS_USED: N` trailers count. */
export function commandDecoder(): OutputDecoder {
  const text = new TextBuffer()
  let tokens = 0
  return {
    push(line) {
      text.add(line)
      const m = /^[\s*`#>]*TOKENS_USED[*`]*\s*:\s*([\d,]+)[\s*`]*$/.exec(line)
      if (m) tokens = parseTokenCount(m[1]) ?? tokens
      return {log: [line], show: [line]}
    },
    text: () => text.toString(),
    tokens: () => tokens,
  }
}

// ------------------------------------------------------------------------ codex

const CODEX_SECTIONS = new Set(['user', 'thinking', 'exec', 'codex', 'tokens used'])
const CODEX_OLD_STAMP = /^\[\d{4}-\d{2}-\d{2}T[^\]]*\]\s*(.*)$/

/**
 * codex exec output: a banner (`OpenAI Codex vX` … between two `--------`
 * lines), the echoed prompt (`user` section), then `thinking` / `exec` /
 * `codex` sections and a `tokens used` footer followed by the count. The
 * condensed view drops the banner, the echoed prompt and the token footer;
 * the trailer text is the condensed view (so trailer examples quoted in the
 * prompt never count). Everything is logged verbatim.
 */
export function codexDecoder(): OutputDecoder {
  const text = new TextBuffer()
  let tokens = 0
  let state: 'start' | 'title' | 'banner' | 'prompt' | 'body' | 'tokens' = 'start'
  let promptSeen = false
  return {
    push(raw) {
      const line = raw
      const trimmed = line.trim()
      const stamped = CODEX_OLD_STAMP.exec(trimmed)
      const marker = (stamped ? stamped[1] : trimmed).toLowerCase()
      const dashes = /^-{4,}$/.test(trimmed)

      // banner: `OpenAI Codex vX`, `--------`, `key: value` lines, `--------`
      if (state === 'start' && /^openai codex\b/i.test(marker)) {
        state = 'title'
        return {log: [line], show: []}
      }
      if (state === 'title' || (state === 'start' && dashes)) {
        if (dashes) state = 'banner'
        return {log: [line], show: []}
      }
      if (state === 'banner') {
        if (dashes) state = 'body'
        return {log: [line], show: []}
      }
      if (state === 'tokens') {
        state = 'body'
        const n = parseTokenCount(trimmed)
        if (n !== undefined) {
          tokens = n
          return {log: [line], show: []}
        }
      }
      const oneLine = /^tokens used:?\s*([\d,]+)$/.exec(marker)
      if (oneLine) {
        tokens = parseTokenCount(oneLine[1]) ?? tokens
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
        return {log: [line], show: []}
      }
      if (state === 'prompt') {
        if (CODEX_SECTIONS.has(marker)) state = 'body'
        else return {log: [line], show: []}
      }
      if (state === 'start') state = 'body'
      text.add(line)
      return {log: [line], show: [line]}
    },
    text: () => text.toString(),
    tokens: () => tokens,
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
    return ''
  }
}

function splitLines(s: string): string[] {
  const lines = s.split(/\r?\n/)
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines
}

/**
 * claude `--output-format stream-json --verbose`: one JSON event per line.
 * - `system` (init): logged as one short line, not shown
 * - `assistant` text: logged and shown; `tool_use`: one line `⏺ Tool(summary)`
 * - `user` tool results: one short `⎿` line in the log only
 * - `result`: the final text (trailers are read from it) and `usage`; tokens
 *   are `input_tokens + output_tokens` (cache reads/creation are not counted).
 *   The result text is shown only when it differs from the last assistant text.
 * A line that is not JSON is logged and shown as it is.
 */
export function claudeDecoder(): OutputDecoder {
  const assistantText = new TextBuffer()
  let resultText: string | undefined
  let lastAssistant = ''
  let tokens = 0
  return {
    push(line) {
      let ev: unknown
      const t = line.trim()
      if (t.startsWith('{')) {
        try {
          ev = JSON.parse(t)
        } catch {
          ev = undefined
        }
      }
      if (!ev || typeof ev !== 'object') {
        if (t === '') return {log: [], show: []}
        assistantText.add(line)
        return {log: [line], show: [line]}
      }
      const e = ev as Record<string, any>
      const out: DecodedLine = {log: [], show: []}
      switch (e.type) {
        case 'system': {
          const bits = [`[claude ${String(e.subtype ?? 'system')}]`]
          if (typeof e.model === 'string') bits.push(`model=${e.model}`)
          if (typeof e.session_id === 'string') bits.push(`session=${e.session_id}`)
          out.log.push(bits.join(' '))
          break
        }
        case 'assistant': {
          const content = Array.isArray(e.message?.content) ? e.message.content : []
          for (const c of content) {
            if (c?.type === 'text' && typeof c.text === 'string') {
              const lines = splitLines(c.text)
              for (const l of lines) assistantText.add(l)
              lastAssistant = c.text.trim()
              out.log.push(...lines)
              out.show.push(...lines)
            } else if (c?.type === 'tool_use') {
              const l = `⏺ ${String(c.name ?? 'tool')}(${summarizeToolInput(c.input)})`
              out.log.push(l)
              out.show.push(l)
            }
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
        case 'result': {
          const u = e.usage ?? {}
          const inTok = Number(u.input_tokens) || 0
          const outTok = Number(u.output_tokens) || 0
          tokens += inTok + outTok
          if (typeof e.result === 'string') {
            resultText = e.result
            const lines = splitLines(e.result)
            out.log.push(...lines)
            if (e.result.trim() !== lastAssistant) out.show.push(...lines)
          }
          if (e.is_error || (typeof e.subtype === 'string' && e.subtype !== 'success')) {
            const l = `[claude result: ${String(e.subtype ?? 'error')}]`
            out.log.push(l)
            out.show.push(l)
          }
          break
        }
        default:
          break
      }
      return out
    },
    text: () => (resultText !== undefined ? resultText : assistantText.toString()),
    tokens: () => tokens,
  }
}
