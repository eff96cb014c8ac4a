import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {claudeDecoder, codexDecoder, commandDecoder, type DecodedLine, type OutputDecoder} from '../../src/agents/output.js'

// SPEC 14.1 decoders, fed the exact bytes the real CLIs printed (test/fixtures/agent-output/,
// copied from the captures of claude 2.1.197 and codex 0.169.0) plus the documented shapes.

const FIX = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../fixtures/agent-output')
const fixture = (name: string) => readFileSync(path.join(FIX, name), 'utf8')

function feed(dec: OutputDecoder, text: string): DecodedLine[] {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines.map((l) => dec.push(l))
}

const NOW = new Date('2026-11-23T02:00:00.000Z')
const now = () => NOW
const ev = (o: unknown) => JSON.stringify(o)

describe('claude decoder on the real captures', () => {
  it('not logged in (claude 2.1.197, IS_SANDBOX=1, empty HOME): unavailable, failed, the result text is the failure line', () => {
    const dec = claudeDecoder()
    const out = feed(dec, fixture('claude-2.1.197-not-logged-in.stream.jsonl'))
    expect(out).toHaveLength(3)
    expect(out[0].progress).toBe(false) // system/init is a start event
    const v = dec.verdict!()
    expect(v.health).toEqual({kind: 'unavailable', reason: 'Not logged in · Please run /login'})
    expect(v.failed).toBe(true)
    expect(v.failureLine).toBe('Not logged in · Please run /login')
    expect(v.lastLine).toBe('Not logged in · Please run /login')
    expect(v.costUsd).toBe(0)
    expect(v.tokensReported).toBe(true)
    expect(dec.tokens()).toBe(0)
  })

  it('root refusal (claude 2.1.197 as root): unavailable with the non-root / IS_SANDBOX hint', () => {
    const dec = claudeDecoder()
    const out = feed(dec, fixture('claude-2.1.197-as-root.txt'))
    expect(out[0].show).toEqual(['--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons'])
    const v = dec.verdict!()
    expect(v.health.kind).toBe('unavailable')
    expect(v.health.kind === 'unavailable' && v.health.reason).toBe(
      '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons; run helix as a non-root user, or set IS_SANDBOX=1 inside a container you trust',
    )
    expect(v.failureLine).toBe('--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons')
    expect(v.tokensReported).toBe(false)
  })
})

describe('claude decoder on claude 2.1.197 offline (captured on the dev machine: unshare -n, a fake API key)', () => {
  it('init and api_retry events are not progress', () => {
    const dec = claudeDecoder()
    const out = feed(dec, fixture('claude-2.1.197-offline.stream.jsonl'))
    expect(out.length).toBeGreaterThanOrEqual(3)
    expect(out.filter((o) => o.progress !== false)).toEqual([])
    expect(out.flatMap((o) => o.log).slice(1, 2)).toEqual([expect.stringMatching(/^\[claude api_retry\]/)])
    expect(dec.verdict!()).toMatchObject({health: {kind: 'ok'}, failed: false, lastLine: null})
  })
})

describe('claude decoder, documented shapes', () => {
  it('rate_limit_event rejected → quota with resetsAt; allowed → not progress; a 429 result keeps that reset', () => {
    const dec = claudeDecoder()
    const reset = Math.floor(NOW.getTime() / 1000) + 3600
    const out = feed(
      dec,
      [
        ev({type: 'system', subtype: 'init', model: 'm'}),
        ev({type: 'rate_limit_event', rate_limit_info: {status: 'allowed', resetsAt: reset, rateLimitType: 'five_hour'}}),
        ev({type: 'rate_limit_event', rate_limit_info: {status: 'rejected', resetsAt: reset, rateLimitType: 'five_hour'}}),
        ev({type: 'result', subtype: 'success', is_error: true, api_error_status: 429, result: "You've hit your limit · resets 3am", total_cost_usd: 0, usage: {input_tokens: 0, output_tokens: 0}}),
      ].join('\n'),
    )
    expect(out.map((o) => o.progress)).toEqual([false, false, false, undefined])
    const v = dec.verdict!()
    expect(v.health).toMatchObject({kind: 'quota', resetAt: '2026-11-23T03:00:00.000Z'})
    expect(v.failed).toBe(true)
    expect(v.failureLine).toBe("You've hit your limit · resets 3am")
  })

  it('a 429 result alone is quota with no reset (helix probes)', () => {
    const dec = claudeDecoder()
    feed(dec, ev({type: 'result', subtype: 'error_during_execution', is_error: true, api_error_status: 429, result: 'API Error: 429 rate_limit_error'}))
    expect(dec.verdict!().health).toEqual({kind: 'quota', resetAt: null, message: 'API Error: 429 rate_limit_error'})
  })

  it('assistant error authentication_failed is unavailable even without the words', () => {
    const dec = claudeDecoder()
    feed(dec, ev({type: 'assistant', error: 'authentication_failed', message: {content: []}}))
    expect(dec.verdict!().health).toEqual({kind: 'unavailable', reason: 'authentication failed'})
  })

  it('is_error without health words: failed with the result text, agent ok; cost and all token kinds summed', () => {
    const dec = claudeDecoder()
    feed(
      dec,
      [
        ev({type: 'assistant', message: {content: [{type: 'text', text: 'Working on it.'}]}}),
        ev({type: 'result', subtype: 'error_max_turns', is_error: true, result: 'Reached max turns (3)', total_cost_usd: 0.25, usage: {input_tokens: 10, output_tokens: 20, cache_creation_input_tokens: 300, cache_read_input_tokens: 4000}}),
        ev({type: 'result', subtype: 'success', is_error: false, result: 'ok', total_cost_usd: 0.5, usage: {input_tokens: 1, output_tokens: 2}}),
      ].join('\n'),
    )
    expect(dec.tokens()).toBe(4333)
    const v = dec.verdict!()
    expect(v).toMatchObject({health: {kind: 'ok'}, failed: true, failureLine: 'Reached max turns (3)', costUsd: 0.75, tokensReported: true})
  })

  it('an agent talking about "Not logged in" in normal text is not unavailable', () => {
    const dec = claudeDecoder()
    feed(dec, [ev({type: 'assistant', message: {content: [{type: 'text', text: 'Fixed the "Not logged in" banner.'}]}}), ev({type: 'result', subtype: 'success', is_error: false, result: 'done'})].join('\n'))
    expect(dec.verdict!()).toMatchObject({health: {kind: 'ok'}, failed: false, failureLine: 'done'})
  })
})

describe('codex decoder on the real capture', () => {
  it('offline codex 0.169.0: start events and reconnect notices are never progress; nothing is shown; not a failure', () => {
    const dec = codexDecoder({now})
    const out = feed(dec, fixture('codex-0.169.0-offline.jsonl'))
    expect(out).toHaveLength(9)
    expect(out.every((o) => o.progress === false)).toBe(true)
    expect(out.flatMap((o) => o.show)).toEqual([])
    expect(out[2].log[0]).toMatch(/^\[codex\] Reconnecting\.\.\. 2\/5/)
    const v = dec.verdict!()
    expect(v.health).toEqual({kind: 'ok'})
    expect(v.failed).toBe(false)
    expect(v.lastLine).toBeNull()
    // the last thing it said, for the operator, though it is no progress
    expect(v.failureLine).toBe('[codex] Reconnecting... waiting for network (Connection failed: error sending request)')
    expect(v.tokensReported).toBe(false)
  })
})

describe('an offline agent that gives up by itself is unavailable, not a failed bead', () => {
  it('claude: the real api_retry notices, then an error result with no work in between', () => {
    const dec = claudeDecoder()
    feed(dec, fixture('claude-2.1.197-offline.stream.jsonl') + '\n' + ev({type: 'result', subtype: 'success', is_error: true, result: 'API Error: Connection error.', usage: {input_tokens: 0, output_tokens: 0}}))
    expect(dec.verdict!()).toMatchObject({failed: true, health: {kind: 'unavailable', reason: 'API Error: Connection error. (gave up after 6 API retries, before any work)'}})
    // the same error after real work is the attempt's failure, not the agent's
    const worked = claudeDecoder()
    feed(worked, [ev({type: 'system', subtype: 'api_retry', attempt: 1, max_retries: 10}), ev({type: 'assistant', message: {content: [{type: 'text', text: 'editing'}]}}), ev({type: 'result', subtype: 'success', is_error: true, result: 'API Error: Connection error.'})].join('\n'))
    expect(worked.verdict!()).toMatchObject({failed: true, health: {kind: 'ok'}})
  })

  it('codex: the real Reconnecting notices, then a final error with no work in between', () => {
    const dec = codexDecoder({now})
    feed(dec, fixture('codex-0.169.0-offline.jsonl') + '\n' + ev({type: 'error', message: 'stream disconnected before completion: error sending request'}))
    expect(dec.verdict!()).toMatchObject({failed: true, health: {kind: 'unavailable', reason: expect.stringMatching(/^stream disconnected before completion: error sending request \(gave up after \d+ reconnects, before any work\)$/)}})
    const worked = codexDecoder({now})
    feed(worked, [ev({type: 'error', message: 'Reconnecting... 1/5'}), ev({type: 'item.completed', item: {type: 'command_execution', command: 'ls', exit_code: 0}}), ev({type: 'error', message: 'stream disconnected'})].join('\n'))
    expect(worked.verdict!()).toMatchObject({failed: true, health: {kind: 'ok'}})
  })
})

describe('codex decoder on stdout+stderr of the real codex 0.169.0, offline (merged like the runner merges them)', () => {
  it('tracing ERROR lines, WARNING, the stdin notice, the ignored-config notice, reconnects: none is progress', () => {
    const dec = codexDecoder({now})
    const out = feed(dec, fixture('codex-0.169.0-offline-merged.txt'))
    expect(out).toHaveLength(12)
    expect(out.filter((o) => o.progress !== false)).toEqual([])
    expect(out.flatMap((o) => o.show)).toEqual([expect.stringMatching(/^WARNING: proceeding, even though we could not create PATH aliases/)])
    expect(dec.verdict!()).toMatchObject({health: {kind: 'ok'}, failed: false, lastLine: null})
  })
})

describe('codex decoder, documented shapes', () => {
  it('agent_message is the text; commands and file changes one line each; turn usage summed (input + output)', () => {
    const dec = codexDecoder({now})
    const out = feed(
      dec,
      [
        ev({type: 'thread.started', thread_id: 't1'}),
        ev({type: 'turn.started'}),
        ev({type: 'item.started', item: {id: 'i0', type: 'command_execution', command: 'bash -lc ls', status: 'in_progress'}}),
        ev({type: 'item.completed', item: {id: 'i0', type: 'command_execution', command: 'bash -lc ls', aggregated_output: 'a\nb\n', exit_code: 0, status: 'completed'}}),
        ev({type: 'item.completed', item: {id: 'i1', type: 'file_change', changes: [{path: 'src/a.ts', kind: 'update'}], status: 'completed'}}),
        ev({type: 'item.completed', item: {id: 'i2', type: 'reasoning', text: 'thinking hard'}}),
        ev({type: 'item.completed', item: {id: 'i3', type: 'agent_message', text: 'Done.\nNEXT_ACTION: BUILD'}}),
        ev({type: 'turn.completed', usage: {input_tokens: 1000, cached_input_tokens: 900, output_tokens: 234}}),
        ev({type: 'turn.completed', usage: {input_tokens: 10, output_tokens: 5}}),
      ].join('\n'),
    )
    expect(out.flatMap((o) => o.show)).toEqual(['⏺ $ bash -lc ls (exit 0)', '⏺ update src/a.ts', 'Done.', 'NEXT_ACTION: BUILD'])
    expect(out.map((o) => o.progress !== false)).toEqual([false, false, true, true, true, true, true, true, true])
    expect(dec.text()).toBe('Done.\nNEXT_ACTION: BUILD')
    expect(dec.tokens()).toBe(1249)
    expect(dec.verdict!()).toMatchObject({health: {kind: 'ok'}, failed: false, tokensReported: true, lastLine: 'NEXT_ACTION: BUILD'})
  })

  it('turn.failed is a failed attempt with its message', () => {
    const dec = codexDecoder({now})
    feed(dec, [ev({type: 'turn.started'}), ev({type: 'turn.failed', error: {message: 'stream error: exceeded retry limit'}})].join('\n'))
    expect(dec.verdict!()).toMatchObject({health: {kind: 'ok'}, failed: true, failureLine: 'stream error: exceeded retry limit'})
  })

  it('a final error event fails the attempt; an error followed by a completed turn does not', () => {
    const a = codexDecoder({now})
    feed(a, [ev({type: 'turn.started'}), ev({type: 'error', message: 'stream disconnected'})].join('\n'))
    expect(a.verdict!()).toMatchObject({failed: true, failureLine: 'stream disconnected'})
    const b = codexDecoder({now})
    feed(b, [ev({type: 'error', message: 'hiccup'}), ev({type: 'turn.completed', usage: {input_tokens: 1, output_tokens: 1}})].join('\n'))
    expect(b.verdict!().failed).toBe(false)
  })

  it('usage limit: quota with the reset from `try again in`, `try again at` (today, tomorrow, dated), or none', () => {
    const q = (msg: string) => {
      const dec = codexDecoder({now})
      feed(dec, [ev({type: 'error', message: msg}), ev({type: 'turn.failed', error: {message: msg}})].join('\n'))
      return dec.verdict!()
    }
    const inTwo = q("You've hit your usage limit. Try again in 2s.")
    expect(inTwo.health).toMatchObject({kind: 'quota', resetAt: '2026-11-23T02:00:02.000Z'})
    expect(inTwo.failed).toBe(true)
    expect(q("You've hit your usage limit. Upgrade to Pro or try again in 4 days 20 hours 9 minutes.").health).toMatchObject({
      resetAt: new Date(NOW.getTime() + (4 * 86400 + 20 * 3600 + 9 * 60) * 1000).toISOString(),
    })
    const local = (h: number, m: number, dayOffset = 0) => new Date(NOW.getFullYear(), NOW.getMonth(), NOW.getDate() + dayOffset, h, m).toISOString()
    const later = new Date(NOW.getTime() + 70 * 60_000) // 70 min ahead, printed as local clock time
    const hh = later.getHours()
    const mm = String(later.getMinutes()).padStart(2, '0')
    const ampm = `${hh % 12 || 12}:${mm} ${hh >= 12 ? 'PM' : 'AM'}`
    expect(q(`You've hit your usage limit. Try again at ${ampm}.`).health).toMatchObject({resetAt: later.toISOString().replace(/\d\d\.\d{3}Z$/, '00.000Z')})
    const earlier = new Date(NOW.getTime() - 60 * 60_000) // already past today → tomorrow
    expect(q(`You've hit your usage limit. Try again at ${earlier.getHours()}:${String(earlier.getMinutes()).padStart(2, '0')}.`).health).toMatchObject({
      resetAt: local(earlier.getHours(), earlier.getMinutes(), earlier.getDate() === NOW.getDate() ? 1 : 0),
    })
    expect(q("You've hit your usage limit. Try again at Dec 29th, 2026 10:15 PM.").health).toMatchObject({resetAt: new Date(2026, 11, 29, 22, 15).toISOString()})
    expect(q('usage_limit_reached').health).toEqual({kind: 'quota', resetAt: null, message: 'usage_limit_reached'})
  })

  it('401 / Unauthorized / Not logged in in an error → unavailable; in an agent message → nothing', () => {
    for (const msg of ['unexpected status 401 Unauthorized: Missing bearer authentication', 'Not logged in. Run codex login.']) {
      const dec = codexDecoder({now})
      feed(dec, ev({type: 'turn.failed', error: {message: msg}}))
      expect(dec.verdict!().health).toEqual({kind: 'unavailable', reason: msg})
    }
    const ok = codexDecoder({now})
    feed(ok, ev({type: 'item.completed', item: {type: 'agent_message', text: 'Handled the 401 Unauthorized case.'}}))
    expect(ok.verdict!().health).toEqual({kind: 'ok'})
  })

  it('text mode still works: usage-limit text, ERROR 401 lines, the tokens used footer', () => {
    const dec = codexDecoder({now})
    feed(dec, ['OpenAI Codex v0.1', '--------', 'model: x', '--------', 'user', 'prompt', 'codex', "[2026-01-01T00:00:00] ERROR: You've hit your usage limit. Try again in 90 seconds.", 'tokens used', '1,234'].join('\n'))
    expect(dec.tokens()).toBe(1234)
    expect(dec.verdict!()).toMatchObject({health: {kind: 'quota', resetAt: '2026-11-23T02:01:30.000Z'}, tokensReported: true})
    const un = codexDecoder({now})
    feed(un, 'ERROR: unexpected status 401 Unauthorized')
    expect(un.verdict!().health.kind).toBe('unavailable')
    const talk = codexDecoder({now})
    feed(talk, 'codex\nI fixed the 401 Unauthorized handler.')
    expect(talk.verdict!().health.kind).toBe('ok')
  })

  it('text mode: prose about usage limits is not a quota answer; codex\'s own words opening a line are', () => {
    const talk = codexDecoder({now})
    feed(talk, ['codex', 'Added a retry for usage_limit_reached.', 'The message "You\'ve hit your usage limit" is now shown.'].join('\n'))
    expect(talk.verdict!().health).toEqual({kind: 'ok'})
    const own = codexDecoder({now})
    feed(own, "You've hit your usage limit. Try again in 2s.")
    expect(own.verdict!().health).toMatchObject({kind: 'quota', resetAt: '2026-11-23T02:00:02.000Z'})
    const json = codexDecoder({now})
    feed(json, '{"error":{"type":"usage_limit_reached","resets_in_seconds":600}}')
    expect(json.verdict!().health.kind).toBe('quota')
  })
})

describe('command agent decoder', () => {
  it('HELIX_AGENT_STATUS: UNAVAILABLE <reason> as the last line', () => {
    const dec = commandDecoder({now})
    const out = feed(dec, 'starting\nHELIX_AGENT_STATUS: UNAVAILABLE license server down\n')
    expect(out.every((o) => o.progress !== false)).toBe(true)
    expect(dec.verdict!()).toMatchObject({health: {kind: 'unavailable', reason: 'license server down'}, failureLine: 'license server down', tokensReported: false})
  })

  it('QUOTA <seconds> and QUOTA <ISO>, trailers after it still count; real output after it cancels it', () => {
    const a = commandDecoder({now})
    feed(a, 'HELIX_AGENT_STATUS: QUOTA 120\nTOKENS_USED: 7\nCOST_USD: 0.02\n')
    expect(a.verdict!()).toMatchObject({health: {kind: 'quota', resetAt: '2026-11-23T02:02:00.000Z'}, tokensReported: true, costUsd: 0.02})
    expect(a.tokens()).toBe(7)
    const b = commandDecoder({now})
    feed(b, '**HELIX_AGENT_STATUS: QUOTA 2026-11-23T05:10:00Z**')
    expect(b.verdict!().health).toMatchObject({kind: 'quota', resetAt: '2026-11-23T05:10:00.000Z'})
    const c = commandDecoder({now})
    feed(c, 'HELIX_AGENT_STATUS: QUOTA soon\n')
    expect(c.verdict!().health).toMatchObject({kind: 'quota', resetAt: null})
    const d = commandDecoder({now})
    feed(d, 'HELIX_AGENT_STATUS: UNAVAILABLE maybe\nactually fine, working\n')
    expect(d.verdict!()).toMatchObject({health: {kind: 'ok'}, failureLine: 'actually fine, working', lastLine: 'actually fine, working'})
  })
})

describe('the failure line is what the agent said, not its accounting (SPEC 14.2)', () => {
  it('skips TOKENS_USED / COST_USD trailers and a bare token count', () => {
    const d = commandDecoder()
    for (const l of ['working on it', 'could not find the test file', 'TOKENS_USED: 1234', 'COST_USD: 0.75', '']) d.push(l)
    expect(d.verdict!().failureLine).toBe('could not find the test file')
    const c = codexDecoder()
    for (const l of ['codex', 'gave up: no such module', 'tokens used', '12,345']) c.push(l)
    expect(c.verdict!().failureLine).toBe('gave up: no such module')
  })

  it('two unfinished beads whose output differs are not "the same line" because of their trailers', async () => {
    const {SystemicDetector} = await import('../../src/loop/systemic.js')
    const line = (out: string[]) => {
      const d = commandDecoder()
      for (const l of out) d.push(l)
      return d.verdict!().failureLine
    }
    const det = new SystemicDetector()
    expect(det.record({bead: 'a', kind: 'fail', line: line(['fixed the parser', 'TOKENS_USED: 10']), durationMs: 1000})).toBeNull()
    expect(det.record({bead: 'b', kind: 'fail', line: line(['wrote the docs', 'TOKENS_USED: 99']), durationMs: 1000})).toBeNull()
  })
})
