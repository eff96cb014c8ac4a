import {describe, expect, it} from 'vitest'
import {NEXT_ACTION_CODES, REVIEW_STATUS, BACKFILL_STATUS, parseTrailers, trailerInt, trailerValue} from '../../src/agents/trailers.js'

describe('trailers', () => {
  it('reads a plain trailer line', () => {
    expect(trailerValue('work done\nNEXT_ACTION: BUILD\n', 'NEXT_ACTION', NEXT_ACTION_CODES)).toBe('BUILD')
  })

  it('strips markdown decoration around the whole line', () => {
    for (const line of ['**NEXT_ACTION: STOP**', '`NEXT_ACTION: STOP`', '> NEXT_ACTION: STOP', '## NEXT_ACTION: STOP', '  * NEXT_ACTION: STOP  ', '**NEXT_ACTION:** STOP', 'NEXT_ACTION: `STOP`']) {
      expect(trailerValue(`x\n${line}\n`, 'NEXT_ACTION', NEXT_ACTION_CODES), line).toBe('STOP')
    }
  })

  it('does not accept a value outside the vocabulary', () => {
    expect(trailerValue('NEXT_ACTION:BUILDING', 'NEXT_ACTION', NEXT_ACTION_CODES)).toBeUndefined()
    expect(trailerValue('NEXT_ACTION: BUILD NOW', 'NEXT_ACTION', NEXT_ACTION_CODES)).toBeUndefined()
    expect(trailerValue('NEXT_ACTION: <CODE>', 'NEXT_ACTION', NEXT_ACTION_CODES)).toBeUndefined()
    expect(trailerValue('REVIEW_STATUS: MAYBE', 'REVIEW_STATUS', REVIEW_STATUS)).toBeUndefined()
  })

  it('ignores trailers mentioned mid-sentence', () => {
    expect(trailerValue('I will print NEXT_ACTION: BUILD at the end', 'NEXT_ACTION', NEXT_ACTION_CODES)).toBeUndefined()
    expect(trailerValue('Remember: NEXT_ACTION: STOP', 'NEXT_ACTION', NEXT_ACTION_CODES)).toBeUndefined()
  })

  it('the last line for a key wins; a last value outside the vocabulary is missing (SPEC 3.2)', () => {
    expect(trailerValue('NEXT_ACTION: BUILD\nmore\nNEXT_ACTION: WAIT\n', 'NEXT_ACTION', NEXT_ACTION_CODES)).toBe('WAIT')
    const text = 'NEXT_ACTION: BUILD\nmore\nNEXT_ACTION: WAIT\nNEXT_ACTION: later\n'
    expect(trailerValue(text, 'NEXT_ACTION', NEXT_ACTION_CODES)).toBeUndefined()
    expect(parseTrailers(text).get('NEXT_ACTION')).toBe('later')
    // a review that first says CLEAN and then something unreadable was never assumed to pass
    expect(trailerValue('REVIEW_STATUS: CLEAN\n...\nREVIEW_STATUS: PENDING\n', 'REVIEW_STATUS', REVIEW_STATUS)).toBeUndefined()
  })

  it('normalises case to the vocabulary spelling', () => {
    expect(trailerValue('review_status: clean', 'REVIEW_STATUS', REVIEW_STATUS)).toBeUndefined() // keys are upper case
    expect(trailerValue('REVIEW_STATUS: issues_found', 'REVIEW_STATUS', REVIEW_STATUS)).toBe('ISSUES_FOUND')
  })

  it('parses every key, CRLF included', () => {
    const m = parseTrailers('REVIEW_STATUS: ISSUES_FOUND\r\nISSUES_COUNT: 2\r\nFINDINGS_FILED: 2\r\nBACKFILL_REPORT: docs/x.md\r\n')
    expect(Object.fromEntries(m)).toEqual({REVIEW_STATUS: 'ISSUES_FOUND', ISSUES_COUNT: '2', FINDINGS_FILED: '2', BACKFILL_REPORT: 'docs/x.md'})
  })

  it('reads integer trailers, commas allowed', () => {
    expect(trailerInt('TOKENS_USED: 1,234', 'TOKENS_USED')).toBe(1234)
    expect(trailerInt('ISSUES_COUNT: 3\nISSUES_COUNT: many', 'ISSUES_COUNT')).toBe(3)
    expect(trailerInt('ISSUES_COUNT: -1', 'ISSUES_COUNT')).toBeUndefined()
  })

  it('has the documented vocabularies', () => {
    expect(NEXT_ACTION_CODES).toEqual(['BUILD', 'DESIGN', 'POLISH', 'ALIGN', 'BACKFILL', 'WAIT', 'GUIDANCE', 'STOP'])
    expect(BACKFILL_STATUS).toContain('COMPLETE')
    expect(trailerValue('BACKFILL_STATUS: complete', 'BACKFILL_STATUS', BACKFILL_STATUS)).toBe('COMPLETE')
  })
})
