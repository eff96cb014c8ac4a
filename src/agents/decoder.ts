/**
 * What every agent output decoder shares (SPEC 3, 14.1): the decoded-line and verdict
 * shapes, the capped trailer text, the verdict bookkeeping and small line helpers.
 * The decoders themselves: decode-command.ts, decode-codex.ts, decode-claude.ts.
 */

import type {AgentHealth} from './types.js'
import {oneLineOf, worseHealth} from './self-report.js'

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
  /** false when nothing but start events and transient notices came (SPEC 14.1): the agent never got to work */
  progressed?: boolean
}

export interface OutputDecoder {
  push(line: string): DecodedLine
  /** the text trailers are read from */
  text(): string
  tokens(): number
  /** SPEC 14.1 verdict, read once the output has ended */
  verdict?(): DecoderVerdict
}

export const TEXT_CAP = 4 * 1024 * 1024

export class TextBuffer {
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

export class Verdicts {
  health: AgentHealth = OK
  failed = false
  errorLine: string | null = null
  lastProgress: string | null = null
  lastTransient: string | null = null
  costUsd = 0
  tokensReported = false
  progressed = false

  see(h: AgentHealth): void {
    // two quota signals (claude's rate_limit_event, then its 429 result): keep the one with a reset
    if (h.kind === 'quota' && this.health.kind === 'quota' && this.health.resetAt === null && h.resetAt !== null) this.health = h
    else this.health = worseHealth(this.health, h)
  }

  /** note what a pushed line produced */
  track(d: DecodedLine): DecodedLine {
    if (d.progress !== false) this.progressed = true
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
      progressed: this.progressed,
    }
  }
}

export function parseJsonObject(line: string): Record<string, any> | undefined {
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

export function oneLine(s: string, max = 240): string {
  const flat = s.replace(/\s*\r?\n\s*/g, ' ⏎ ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}

export function splitLines(s: string): string[] {
  const lines = s.split(/\r?\n/)
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines
}
