// codex's decoder (SPEC 3, 14.1): `exec --json` events, and the text mode of older builds and stubs.
import {codexResetAt, CODEX_QUOTA, CODEX_UNAUTHORIZED, oneLineOf} from './self-report.js'
import {oneLine, parseJsonObject, parseTokenCount, splitLines, TextBuffer, Verdicts, type DecodedLine, type DecoderOptions, type OutputDecoder} from './decoder.js'

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
/** codex's own quota words at the start of a text-mode line, or its JSON error object */
const CODEX_QUOTA_OWN = /^(?:you(?:'|’)ve hit your usage limit|usage_limit_reached\b|\{.*"usage_limit_reached")/i
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
 * - a final error after `Reconnecting` notices and no work at all → unavailable (offline);
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
  // codex offline: reconnect notices, then a final error, and no work in between
  let reconnects = 0
  let worked = false
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
        worked = true
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
        if (/^reconnecting|\bretrying \d+\/\d+/i.test(msg)) reconnects++
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
        worked = true
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
      // error lines say quota or unauthorized; a body line says quota only when it opens with
      // codex's own words (or is its JSON error), never when the agent talks about usage limits
      const isError = CODEX_ERROR_LINE.test(trimmed)
      const said = trimmed.replace(/^\[[^\]]*\]\s*/, '').replace(/^(?:error|fatal)\s*:?\s*/i, '')
      if (isError || (d.show.length > 0 && CODEX_QUOTA_OWN.test(said))) judge(said, isError)
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
        if (reconnects > 0 && !worked && out.health.kind === 'ok') out.health = {kind: 'unavailable', reason: `${err} (gave up after ${reconnects} reconnects, before any work)`}
      }
      return out
    },
  }
}
