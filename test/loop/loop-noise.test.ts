import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import {FakeLanding, check, closeIt, harness, opts, type Harness} from './fakes.js'

const B = (id: string, extra: Record<string, unknown> = {}) => ({id, title: `title ${id}`, ...extra})
/** every out.* call is one session-log record (src/output/terminal.ts) */
const logged = (h: Harness, re: RegExp) => [...h.normal, ...h.summary, ...h.both].filter((l) => re.test(l))

const landing = new FakeLanding()

describe('loop noise (issue 20 item 9)', () => {
  it('`landed <id>` is one line per landing, shown in both modes', async () => {
    const h = harness([B('a'), B('b')], {implementation: closeIt, check: check('WAIT')}, {landing})
    await runLoop(h.deps, opts({workers: 2}))
    expect(logged(h, /landed a \(/)).toHaveLength(1)
    expect(h.summaryView().some((l) => /landed a \(/.test(l))).toBe(true)
    expect(h.normalView().some((l) => /landed a \(/.test(l))).toBe(true)
  })

  it('one line per dispatch: `complete (…) — log …`, no second "finished" line', async () => {
    const h = harness([B('a')], {implementation: closeIt, check: check('WAIT')})
    await runLoop(h.deps, opts())
    expect(logged(h, /codex (\w+ )?(complete|finished) \(rc=/)).toHaveLength(h.calls.length)
    expect(h.normalView().filter((l) => /codex complete \(rc=0, 1s, 10 tokens\) — log L\d+–L\d+ in /.test(l))).toHaveLength(1)
  })

  it("an epic's closing line is shown in summary mode, between the child's review and the epic's own", async () => {
    const h = harness([B('ep', {issue_type: 'epic'}), B('c1', {parent: 'ep'})], {implementation: closeIt, review: () => ({text: 'REVIEW_STATUS: CLEAN'}), check: check('WAIT')})
    await runLoop(h.deps, opts({autoReview: true, reviewThreshold: 0}))
    const s = h.summaryView()
    const reviews = s.map((l, i) => (/claude review complete/.test(l) ? i : -1)).filter((i) => i >= 0)
    const closing = s.findIndex((l) => l === 'helix: epic ep complete — closing')
    expect(reviews).toHaveLength(2)
    expect(closing).toBeGreaterThan(reviews[0] as number)
    expect(closing).toBeLessThan(reviews[1] as number)
  })

  it('normal-mode failure lines carry the reason, as summary mode does', async () => {
    const h = harness([B('a')], {implementation: () => ({rc: 2, text: 'tests failed: 3 of 40'}), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    await runLoop(h.deps, opts({maxCycles: 0}))
    expect(h.normalView()).toContain('helix: implementation failed during cycle 1 (will not count toward completed cycles): rc=2: tests failed: 3 of 40')
  })
})
