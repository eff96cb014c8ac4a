import {readFileSync} from 'node:fs'
import {hostname} from 'node:os'
import path from 'node:path'
import {spawn} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {beads, calls, helixIn, implOrder, project, runState} from './e2e-helpers.js'
import {trackProcess} from '../support/tmp.js'

// helix run in the test's own process (stub agents), part 2 of 3: orphans at start, review verdicts, output modes and agent flags.

const NO_REVIEW = ['--no-auto-review']

describe('helix run end to end (in-process, stub agents)', () => {
  it('orphan matrix at start: stale reclaimed; live pid, fresh, other owner skipped or ignored; other host by age', async () => {
    const sleeper = trackProcess(spawn('sleep', ['60'], {stdio: 'ignore'}))
    const old = '2026-01-01T00:00:00Z'
    const fresh = new Date().toISOString()
    const claim = (pid: number, at: string, extra: Record<string, unknown> = {}) => ({status: 'in_progress', owner: 'helix', 'claimed-at': at, 'claimed-pid': pid, 'claimed-machine': hostname(), ...extra})
    const p = project(
      [
        {id: 'hx-stale', ...claim(999999, old)},
        {id: 'hx-live', ...claim(sleeper.pid!, old)},
        {id: 'hx-fresh', ...claim(999999, fresh)},
        {id: 'hx-otherown', ...claim(999999, old, {owner: 'someone'})},
        {id: 'hx-otherhost', ...claim(sleeper.pid!, old, {'claimed-machine': 'elsewhere.example'})},
      ],
      {check: ['next:WAIT']},
    )
    try {
      const r = await helixIn(p, ['run', ...NO_REVIEW])
      expect(r.code).toBe(0)
      expect(r.stderr).toMatch(/helix: reclaiming orphaned hx-stale \(age=\d+s, pid=999999 dead\)/)
      expect(r.stderr).toContain(`claimed by PID ${sleeper.pid} which is still alive, skipping`)
      expect(r.stderr).toMatch(/claimed \d+s ago \(threshold 7200s\), too fresh to reclaim/)
      expect(r.stderr).toMatch(/helix: reclaiming orphaned hx-otherhost/)
      expect(r.stderr).not.toContain('reclaiming orphaned hx-otherown')
      // SPEC 13.3: a bead of another owner is never claimed by helix run, stale or not
      const order = implOrder(p)
      expect(order.sort()).toEqual(['hx-otherhost', 'hx-stale'])
      const t = beads(p)
      expect(t.get('hx-live')!.status).toBe('in_progress')
      expect(t.get('hx-fresh')!.status).toBe('in_progress')
      expect(t.get('hx-otherown')!.owner).toBe('someone')
    } finally {
      sleeper.kill('SIGKILL')
    }
  })

  // one per outcome: continue, continue with findings filed, stop with exit 1 (a missing
  // trailer is the same outcome as garbage: orchestrator.test.ts 'review %s → stop exit 1')
  it.each([
    ['CLEAN', 'review:CLEAN', 0, null],
    ['ISSUES_FOUND', ['review:ISSUES_FOUND:2', 'review:CLEAN'], 0, 'helix: review reported 2 issue(s), 2 filed as tracker issues'],
    ['garbage', 'review:garbage', 1, 'helix: review output missing REVIEW_STATUS trailer'],
  ])('review %s', async (_name, step, code, line) => {
    const p = project([{id: 'hx-r1'}, {id: 'hx-r2'}], {review: Array.isArray(step) ? step : [step], check: ['next:WAIT']})
    const r = await helixIn(p, ['run', '--review-threshold', '0'])
    expect(r.code).toBe(code)
    expect(r.stderr).toMatch(/helix: \[\d\d:\d\d:\d\d\] post-implementation review of hx-r1/)
    if (line) expect(r.stderr).toContain(line)
    const reviews = calls(p).filter((c) => c.action === 'review')
    expect(reviews[0]).toBeDefined()
    if (code === 1) {
      expect(implOrder(p)).toEqual(['hx-r1'])
      expect(runState(p).stop_reason).toBe('error')
    } else {
      expect(implOrder(p)[0]).toBe('hx-r1')
      expect(implOrder(p)).toContain('hx-r2')
    }
    if (_name === 'ISSUES_FOUND') {
      const found = [...beads(p).values()].filter((b) => (b.labels as string[] | undefined)?.includes('review-finding'))
      expect(found.length).toBeGreaterThanOrEqual(2)
      expect(runState(p).injected_supervisory.length).toBeGreaterThanOrEqual(2)
    }
  })

  it('summary mode: stdout empty, exact stderr lines, log ranges point at exactly the agent output', async () => {
    const p = project([{id: 'hx-s1'}, {id: 'hx-s2'}], {implementation: {'hx-s2': ['fail'], default: ['close']}, check: ['next:WAIT']})
    const r = await helixIn(p, ['run', '--summary', ...NO_REVIEW, '--max-cycles', '1'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trimEnd().split('\n')
    const t = '\\[\\d\\d:\\d\\d:\\d\\d\\]'
    const logRe = new RegExp(`^helix: ${t} codex complete \\(rc=0, \\d+s, 0 tokens\\) — log L(\\d+)–L(\\d+) in (/.+\\.log)$`)
    expect(lines[0]).toMatch(new RegExp(`^helix: ${t} cycle 1: hx-s1 \\(2 ready\\) — bead hx-s1$`))
    expect(lines[1]).toMatch(logRe)
    expect(lines[2]).toMatch(new RegExp(`^helix: ${t} cycle 1: hx-s1 → COMPLETE \\(1 of 1 cycles completed, 0 tokens\\)$`))
    expect(lines[3]).toBe('helix: reached max cycles (1)')
    expect(lines[4]).toBe('helix: ═══ run complete: 1 attempted, 1 completed, 0 skipped, 0 tokens ═══')
    expect(lines, lines.join("\n")).toHaveLength(5)
    const [, la, lb, file] = logRe.exec(lines[1])!
    expect(path.isAbsolute(file)).toBe(true)
    const records = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const first = Number(la)
    const last = Number(lb)
    expect(last).toBeGreaterThanOrEqual(first)
    for (let i = first; i <= last; i++) expect(records[i - 1]).toMatchObject({stream: 'agent', dispatch: 1})
    expect(records[first - 2].stream).not.toBe('agent')
    expect(records[last]?.stream).not.toBe('agent')
    expect(records.filter((x) => x.stream === 'agent' && x.dispatch === 1)).toHaveLength(last - first + 1)
  })

  it('--claude: stream-json agent, tokens summed into the run, log range in summary mode', async () => {
    const p = project([{id: 'hx-c1'}], {implementation: ['tokens:1234 close']})
    const r = await helixIn(p, ['run', '--claude', '-s', '--no-auto-review', '--max-cycles', '1'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/claude complete \(rc=0, \d+s, 1,234 tokens\) — log L\d+–L\d+ in \//)
    expect(r.stderr).toContain('cycle 1: hx-c1 → COMPLETE (1 of 1 cycles completed, 1,234 tokens)')
    expect(calls(p)[0].as ?? 'claude').toBe('claude')
    expect(runState(p)).toMatchObject({agent: 'claude', total_tokens: 1234})
  })

  it('--model goes to the implementation agent, not to a review agent of another kind; the claim token reaches the agent', async () => {
    const p = project([{id: 'hx-m1'}], {check: ['next:WAIT']})
    const r = await helixIn(p, ['run', '--model', 'm-one', '--effort', 'low', '--review-threshold', '0'])
    expect(r.code).toBe(0)
    const all = calls(p) as unknown as Array<{action: string; as?: string; argv: string[]}>
    const impl = all.find((c) => c.action === 'implementation')!
    const review = all.find((c) => c.action === 'review')!
    expect(impl.argv.join(' ')).toContain('-m m-one')
    expect(impl.argv.join(' ')).toContain('model_reasoning_effort=low')
    expect(review.as).toBe('claude')
    expect(review.argv).not.toContain('--model')
    expect(review.argv.join(' ')).toContain('--effort low')
  })
})
