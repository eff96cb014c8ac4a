import {describe, expect, it} from 'vitest'
import {claudeDecoder, codexDecoder, commandDecoder, parseTokenCount} from '../../src/agents/output.js'

function feed(dec: ReturnType<typeof codexDecoder>, text: string): string[] {
  const shown: string[] = []
  for (const l of text.split('\n')) shown.push(...dec.push(l).show)
  return shown
}

describe('codex output', () => {
  it('drops the banner, the echoed prompt and the token footer; counts tokens with commas', () => {
    const dec = codexDecoder()
    const shown = feed(
      dec,
      [
        'OpenAI Codex v0.46.0 (research preview)',
        '--------',
        'workdir: /p',
        'model: gpt-5-codex',
        '--------',
        'user',
        'HELIX check action',
        'NEXT_ACTION: <CODE>',
        '',
        'thinking',
        'pondering',
        'codex',
        'All good.',
        'NEXT_ACTION: WAIT',
        'tokens used',
        '12,345',
        'All good.',
      ].join('\n'),
    )
    expect(shown).toEqual(['thinking', 'pondering', 'codex', 'All good.', 'NEXT_ACTION: WAIT', 'All good.'])
    expect(dec.tokens()).toBe(12345)
    expect(dec.text()).not.toContain('HELIX check action')
  })
  it('only the first user section is the echoed prompt', () => {
    const dec = codexDecoder()
    const shown = feed(dec, ['user', 'the prompt', 'codex', 'Which user?', 'user', 'is shown'].join('\n'))
    expect(shown).toEqual(['codex', 'Which user?', 'user', 'is shown'])
  })
  it('reads the old one-line footer too', () => {
    const dec = codexDecoder()
    feed(dec, 'hello\n[2025-01-01T00:00:00] tokens used: 987')
    expect(dec.tokens()).toBe(987)
  })
  it('parses token counts strictly', () => {
    expect(parseTokenCount('1,234')).toBe(1234)
    expect(parseTokenCount(' 42 ')).toBe(42)
    expect(parseTokenCount('1,23')).toBeUndefined()
    expect(parseTokenCount('12k')).toBeUndefined()
  })
})

describe('claude output', () => {
  it('decodes events; result text and usage (cache tokens count, SPEC 14.1); non-JSON passes through', () => {
    const dec = claudeDecoder()
    const ev = (o: unknown) => JSON.stringify(o)
    const shown = feed(
      dec,
      [
        ev({type: 'system', subtype: 'init', model: 'm'}),
        ev({type: 'assistant', message: {content: [{type: 'text', text: 'Looking.'}, {type: 'tool_use', name: 'Read', input: {file_path: '/p/a.ts'}}]}}),
        ev({type: 'user', message: {content: [{type: 'tool_result', content: 'file body'}]}}),
        'plain warning line',
        ev({type: 'result', subtype: 'success', result: 'Done.\nREVIEW_STATUS: CLEAN', usage: {input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 1000}}),
      ].join('\n'),
    )
    expect(shown).toEqual(['Looking.', '⏺ Read(/p/a.ts)', 'plain warning line', 'Done.', 'REVIEW_STATUS: CLEAN'])
    expect(dec.tokens()).toBe(1015)
    expect(dec.verdict!()).toMatchObject({health: {kind: 'ok'}, failed: false, tokensReported: true, lastLine: 'REVIEW_STATUS: CLEAN'})
    expect(dec.text()).toBe('Done.\nREVIEW_STATUS: CLEAN')
  })
})

describe('command output', () => {
  it('TOKENS_USED trailer, last wins', () => {
    const dec = commandDecoder()
    feed(dec, 'TOKENS_USED: 5\nwork\n**TOKENS_USED: 1,200**')
    expect(dec.tokens()).toBe(1200)
  })
})
