// The command agent's decoder (SPEC 3.2, 14.1): output verbatim, trailers and a status line.
import type {AgentHealth} from './types.js'
import {oneLineOf, quotaValueResetAt} from './self-report.js'
import {parseTokenCount, TextBuffer, Verdicts, type DecoderOptions, type OutputDecoder} from './decoder.js'

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
