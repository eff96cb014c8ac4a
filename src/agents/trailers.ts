/**
 * Trailer parsing (SPEC 3.2).
 *
 * A trailer is a whole line that, once markdown decoration (`*`, `` ` ``, `#`,
 * `>`) and surrounding spaces are stripped from both ends, reads `KEY: VALUE`.
 * Prose that mentions a trailer mid-sentence is not a trailer. Decoration that
 * agents commonly wrap around the key alone (`**NEXT_ACTION:** BUILD`) is
 * tolerated too. Values are compared to a vocabulary case-insensitively and
 * returned in the vocabulary's spelling; `NEXT_ACTION: BUILDING` is not BUILD.
 */

export const NEXT_ACTION_CODES = ['BUILD', 'DESIGN', 'POLISH', 'ALIGN', 'BACKFILL', 'WAIT', 'GUIDANCE', 'STOP'] as const
export type NextActionCode = (typeof NEXT_ACTION_CODES)[number]

export const REVIEW_STATUS = ['CLEAN', 'ISSUES_FOUND'] as const
export type ReviewStatus = (typeof REVIEW_STATUS)[number]

/**
 * BACKFILL_STATUS vocabulary: COMPLETE (the report covers the whole scope),
 * PARTIAL (a report was written but some areas are left for a later pass),
 * NO_CHANGES (nothing needed backfilling; a report still says so), FAILED
 * (the agent could not do the work). helix accepts COMPLETE, PARTIAL and
 * NO_CHANGES as a successful backfill when BACKFILL_REPORT names an existing file.
 */
export const BACKFILL_STATUS = ['COMPLETE', 'PARTIAL', 'NO_CHANGES', 'FAILED'] as const
export type BackfillStatus = (typeof BACKFILL_STATUS)[number]
export const BACKFILL_SUCCESS: readonly BackfillStatus[] = ['COMPLETE', 'PARTIAL', 'NO_CHANGES']

const DECORATION = /^[\s*`#>]+|[\s*`#>]+$/g
const TRAILER_LINE = /^([A-Z][A-Z0-9_]*)[*`]*[ \t]*:[ \t]*(.*)$/

/** One trailer line → [key, value], or undefined when the line is not a trailer. */
export function parseTrailerLine(line: string): [string, string] | undefined {
  if (line.length > 4096) return undefined
  const stripped = line.replace(DECORATION, '')
  const m = TRAILER_LINE.exec(stripped)
  if (!m) return undefined
  const value = m[2].replace(DECORATION, '')
  if (value === '') return undefined
  return [m[1], value]
}

/** Every trailer in `text`; for a key seen more than once, the last line wins. */
export function parseTrailers(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of text.split(/\r?\n/)) {
    const kv = parseTrailerLine(line)
    if (kv) out.set(kv[0], kv[1])
  }
  return out
}

/**
 * The value of trailer `key` in `text` (SPEC 3.2): the **last** line for `key`
 * decides. With a vocabulary, a last value outside it counts as missing
 * (undefined) — an earlier valid line does not stand in for it, so a review that
 * ends `REVIEW_STATUS: CLEAN` … `REVIEW_STATUS: PENDING` is unreadable, never
 * "clean". Values come back in the vocabulary's spelling.
 */
export function trailerValue(text: string, key: string, vocabulary?: readonly string[]): string | undefined {
  const lines = text.split(/\r?\n/)
  for (let i = lines.length - 1; i >= 0; i--) {
    const kv = parseTrailerLine(lines[i])
    if (!kv || kv[0] !== key) continue
    if (!vocabulary) return kv[1]
    return vocabulary.find((v) => v.toUpperCase() === kv[1].toUpperCase())
  }
  return undefined
}

/** A non-negative integer trailer (`ISSUES_COUNT: 3`, `TOKENS_USED: 1,234`); undefined when absent or not a number. */
export function trailerInt(text: string, key: string): number | undefined {
  const lines = text.split(/\r?\n/)
  for (let i = lines.length - 1; i >= 0; i--) {
    const kv = parseTrailerLine(lines[i])
    if (!kv || kv[0] !== key) continue
    if (/^\d{1,3}(,\d{3})+$|^\d+$/.test(kv[1])) return Number(kv[1].replace(/,/g, ''))
  }
  return undefined
}
