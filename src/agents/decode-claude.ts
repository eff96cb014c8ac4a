// claude's decoder (SPEC 3, 14.1): `--output-format stream-json --verbose` events.
import {oneLineOf, ROOT_HINT, ROOT_REFUSAL, unixToIso} from './self-report.js'
import {oneLine, parseJsonObject, splitLines, TextBuffer, Verdicts, type DecodedLine, type DecoderOptions, type OutputDecoder} from './decoder.js'

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
 *   An error result after `api_retry` notices and no work at all → unavailable (offline).
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
  // claude offline: api_retry notices, then (retries spent) an error result, and no work in between
  let retries = 0
  let worked = false
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
        if (e.subtype === 'api_retry') retries++
        if (e.subtype === 'init' || e.subtype === 'api_retry') out.progress = false
        break
      }
      case 'assistant': {
        if (typeof e.error !== 'string' || e.error === '') worked = true
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
        worked = true
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
          else if (retries > 0 && !worked && Number(e.api_error_status) !== 429) v.see({kind: 'unavailable', reason: `${said || 'error'} (gave up after ${retries} API retries, before any work)`})
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
