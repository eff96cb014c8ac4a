// issue 20: the report a person reads at 7 a.m. — the runs' real span, a runs table with the
// stop in words, failures with attempt, time, log and "closed on attempt 3", verdicts, what is
// left, the epic's closure counted, no $0.00 when no agent reported a cost, --html to stdout.
// In-process (test/support/in-process.ts): the report's text and page, no CLI start; helix
// report through the built CLI is report.e2e.test.ts.
import {existsSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {project} from '../operator/helpers.js'
import {helixInProcess as helix} from '../support/in-process.js'
import {morning} from './helpers.js'
import {axisTicks} from '../../src/report/html.js'

describe('helix report: the morning after (issue 20)', () => {
  it('text: span, runs table, failures with attempts and log, verdicts, left, epic closure, no cost', async () => {
    const root = project({beads: []})
    const {log} = morning(root, Date.now())
    const r = await helix(root, ['report'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const out = r.stdout
    expect(out).toMatch(/^helix report: 1 run, \d{4}-\d\d-\d\d \d\d:\d\d → (\d{4}-\d\d-\d\d )?\d\d:\d\d \(1h\)$/m)
    expect(out).toMatch(/^ {2}\d{4}-\d\d-\d\d \d\d:\d\d → \d\d:\d\d {2}\.\/agent\.sh, 3 workers$/m)
    expect(out).toMatch(/^ {4}cycles: 2 completed of 7 attempted; 0 tokens$/m)
    expect(out).toContain('    stopped: error: review output missing REVIEW_STATUS trailer\n')
    // SPEC 22.2: it opens with what needs the operator
    expect(out.split('\n')[0]).toBe('1 bead needs you: hx-g7 blocked: failed 3 times')
    // failures grouped by bead: a header per bead, its numbered attempts under it, no two identical lines
    expect(out).toMatch(/^Failures \(5 on 2 beads\):$/m)
    const failures = out.split('\n').filter((l) => /^ {4}attempt /.test(l))
    expect(failures).toHaveLength(5)
    expect(new Set(failures).size).toBe(5)
    const section = out.slice(out.indexOf('Failures ('), out.indexOf('\nBlocked ('))
    expect(section).toMatch(
      /^ {2}hx-b2 — Write the output\n {4}attempt 1 at \d\d:\d\d: FAILED \(rc=1: tests failed\) — closed on attempt 3\n {6}log: .*\n {4}attempt 2 at \d\d:\d\d: FAILED \(rc=1: tests failed\) — closed on attempt 3\n/m,
    )
    expect(section).toMatch(/^ {2}hx-g7 — Flaky network test\n {4}attempt 1 /m)
    expect(section).toMatch(/^ {4}attempt 3 at \d\d:\d\d: NOT_COMPLETED \(bead still open\) — still not closed$/m)
    expect(out).toContain(`      log: ${log} (cycle 4)\n`)
    // the epic closed with its last child: counted, with the two cycle closes
    expect(out).toMatch(/^Closed \(3\):$/m)
    expect(out).toMatch(/^ {2}hx-epic {2}The exporter {2}\[closed with its children\]$/m)
    expect(out).toMatch(/^Totals: 7 cycles, 3 closed, 5 failed; 0 tokens$/m)
    // verdicts from the session log
    expect(out).toMatch(/^Verdicts \(3\):$/m)
    expect(out).toMatch(/^ {2}\d\d:\d\d {2}review of hx-a1: CLEAN$/m)
    expect(out).toMatch(/^ {2}\d\d:\d\d {2}review of hx-b2: ISSUES_FOUND \(2 issues\)$/m)
    expect(out).toMatch(/^ {2}\d\d:\d\d {2}check: STOP$/m)
    // what is left, with why
    expect(out).toMatch(/^Left \(3\):$/m)
    expect(out).toMatch(/^ {2}hx-g7 {2}blocked: failed 3 times — Flaky network test$/m)
    expect(out).toMatch(/^ {2}hx-w8 {2}waiting on hx-g7 — Docs for the exporter$/m)
    expect(out).toMatch(/^ {2}hx-r9 {2}ready — Tidy the README$/m)
    // no agent reported a cost: no $ anywhere
    expect(out).not.toContain('$')
    expect(out).not.toMatch(/ cost /)
  })

  it('--html with no value, or -, writes the page to stdout and no file', async () => {
    const root = project({beads: []})
    morning(root, Date.now())
    const before = readdirSync(root).sort()
    for (const args of [['report', '--html'], ['report', '--html', '-'], ['report', '--html', '--since', '7d']]) {
      const r = await helix(root, args)
      expect(r.code, args.join(' ')).toBe(0)
      expect(r.stdout.startsWith('<!doctype html>')).toBe(true)
      expect(r.stdout.trimEnd().endsWith('</html>')).toBe(true)
      expect(r.stdout).toContain('id="verdicts"')
      expect(r.stdout).toContain('<p id="needs-you"><b>1 bead needs you: hx-g7 blocked: failed 3 times</b></p>')
      // the chart counts the epic closed with its children, as the headline does (issue 29)
      expect(r.stdout).toMatch(/<b id="total-closed">3<\/b>/)
      expect(r.stdout).toMatch(/text-anchor="end">3<\/text>/)
      expect(r.stdout.match(/class="cum-point"/g)).toHaveLength(3)
    }
    expect(existsSync(path.join(root, '-'))).toBe(false)
    expect(readdirSync(root).sort()).toEqual(before)
  })

  it('the time axis: round ticks, never two equal labels, seconds when the span is short', () => {
    const t0 = Date.parse('2026-11-24T04:36:10Z')
    for (const span of [20_000, 90_000, 4 * 60_000, 25 * 60_000, 3 * 3_600_000, 30 * 3_600_000]) {
      const ticks = axisTicks(t0, t0 + span)
      expect(ticks.length, String(span)).toBeGreaterThanOrEqual(2)
      expect(ticks.length).toBeLessThanOrEqual(9)
      const labels = ticks.map((t) => t.label)
      expect(new Set(labels).size, labels.join(' ')).toBe(labels.length)
      for (const t of ticks) expect(t.t).toBeGreaterThanOrEqual(t0)
    }
    expect(axisTicks(t0, t0 + 90_000)[0].label).toMatch(/^\d\d:\d\d:\d\d$/)
  })
})
