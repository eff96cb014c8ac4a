import {readFileSync, readdirSync, statSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {project} from '../operator/helpers.js'
import {helixInProcess as helix} from '../support/in-process.js'
import {appendRuns, cycle, overnight, run} from './helpers.js'

// helix report's text, JSON, page and refusals, in-process (test/support/in-process.ts): no
// node start per case. report.e2e.test.ts keeps one exit 0 and one exit 1 through the built CLI.

const proj = (): string => project({beads: []})

const ESC = '\u001b'
const BAD = `${ESC}]0;x\u0007${ESC}[2J\r\u0000\u202e\nnext`

describe('helix report (in-process)', () => {
  it('text: runs of the last 24h, closed beads with commits, failures and blocks with reasons, per-bead and total tokens/cost/time', async () => {
    const root = proj()
    overnight(root, Date.now())
    const r = await helix(root, ['report'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const out = r.stdout
    // issue 20: the runs' real span (5h ago → 1h ago), not the 24h query window
    expect(out).toMatch(/^helix report: 2 runs, \d{4}-\d\d-\d\d \d\d:\d\d → (\d{4}-\d\d-\d\d )?\d\d:\d\d \(4h\)$/m)
    expect(out).toMatch(/^Closed \(4\):$/m)
    expect(out).toMatch(/^  hx-a1  Title of hx-a1  \[aaaa1000de\]$/m)
    expect(out).not.toContain('hx-old') // 2 days ago: outside the default window
    // grouped by bead (issue 29): the bead once, its attempts under it
    expect(out).toMatch(/^Failures \(6 on 4 beads\):$/m)
    expect(out).toMatch(/^ {2}hx-b2 — Title of hx-b2\n {4}attempt 1 at \d\d:\d\d: FAILED \(rc=1: npm test failed\) — closed on attempt 2$/m)
    expect(out).toMatch(/^ {2}hx-e5 — Title of hx-e5\n {4}attempt 1 at \d\d:\d\d: NOT_LANDED \(conflict in a\.ts\) — still not closed$/m)
    expect(out).toMatch(
      /^ {2}hx-g7 — Title of hx-g7\n {4}attempt 1 at \d\d:\d\d: NOT_COMPLETED \(bead still open\).*\n {4}attempt 2 at \d\d:\d\d: NOT_COMPLETED \(bead still open\).*\n {4}attempt 3 at \d\d:\d\d: STALLED \(no output for 600s\) — still not closed$/m,
    )
    // the runs table: agent, workers, stop reason
    expect(out).toMatch(/^  \d{4}-\d\d-\d\d \d\d:\d\d → \d\d:\d\d  codex, review claude, 2 workers$/m)
    expect(out).toMatch(/^    cycles: 3 completed of 6 attempted; 9,000 tokens, \$0\.45$/m)
    expect(out).toMatch(/^    stopped: completed$/m)
    expect(out).toMatch(/^    stopped: blocked$/m)
    expect(out).toMatch(/^Blocked \(1\):$/m)
    expect(out).toMatch(/^  hx-g7  failed 3 times \(3 attempts\) — Title of hx-g7$/m)
    // per bead: attempts, agent time, tokens, cost
    expect(out).toMatch(/^  hx-b2 +2 +47m +2,000 +\$0\.10 +closed/m)
    expect(out).toMatch(/^  hx-a1 +1 +20m +4,000 +\$0\.20 +closed/m)
    expect(out).toMatch(/^Totals: 10 cycles, 4 closed, 6 failed; 13,000 tokens, \$0\.65$/m)
    expect(out).toMatch(/^Time: +runs 3h, agents busy 3h 37m, paused 15m, idle 7m$/m)
    expect(out).toMatch(/skipped 1 unreadable line of runs\.jsonl: 3/)
  })

  it('--since 3d and --since DATE widen the window; --json carries the same numbers', async () => {
    const root = proj()
    const now = Date.now()
    overnight(root, now)
    const wide = await helix(root, ['report', '--since', '3d', '--json'])
    expect(wide.code).toBe(0)
    const j = JSON.parse(wide.stdout)
    expect(j.runs).toBe(3)
    expect(j.closed.map((c: {id: string}) => c.id)).toEqual(['hx-old', 'hx-a1', 'hx-c3', 'hx-b2', 'hx-f6'])
    expect(j.totals).toMatchObject({cycles: 11, closed: 5, failed: 6, paused_ms: 15 * 60_000, idle_ms: 7 * 60_000})
    expect(j.blocked).toEqual([{id: 'hx-g7', title: 'Title of hx-g7', reason: 'failed 3 times', attempts: 3}])
    const b = j.beads.find((x: {id: string}) => x.id === 'hx-g7')
    expect(b).toMatchObject({attempts: 3, closed: false, last_outcome: 'STALLED', tokens: 3000, time_ms: 27 * 60_000})
    expect(j.skipped_lines).toEqual([3])

    const d = new Date(now - 3 * 86_400_000)
    const date = `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`
    expect(JSON.parse((await helix(root, ['report', '--since', date, '--json'])).stdout).runs).toBe(3)
    expect(JSON.parse((await helix(root, ['report', '--since', '90m', '--json'])).stdout).runs).toBe(1)
  })

  it('bad --since, a directory for --html, an unexpected argument: one line, exit 1, nothing written', async () => {
    const root = proj()
    overnight(root, Date.now())
    const before = readdirSync(root).sort()
    const out = path.join(root, 'out.html')
    const cases: Array<[string[], RegExp]> = [
      [['--since', 'yesterday', '--html', out], /^helix: invalid --since 'yesterday': use a duration like 24h, 30m, 7d or a date like 2026-11-22\n$/],
      [['--since', '2026-02-31', '--html', out], /^helix: invalid --since '2026-02-31'/],
      [['--since', '2999-01-01'], /^helix: invalid --since '2999-01-01': it is in the future\n$/],
      [['--since', `1h${BAD.replace('\u0000', '')}`], /^helix: invalid --since '1h\?\]0;x\?\?\[2J\?\?⏎next'/],
      [['--html', root], /^helix: --html .* is a directory\n$/],
      // the reason in words, not a bare errno code ('ENOENT')
      [['--html', path.join(root, 'no-such-dir', 'x.html')], /^helix: cannot write --html .*x\.html: the directory .*no-such-dir does not exist\n$/],
      [['extra'], /^helix report: unexpected argument 'extra'\n$/],
    ]
    for (const [args, msg] of cases) {
      const r = await helix(root, ['report', ...args])
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.stderr).toMatch(msg)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(r.stdout).toBe('')
    }
    expect(readdirSync(root).sort()).toEqual(before)
  })

  it('text output sanitizes ids, titles and reasons from the history', async () => {
    const root = proj()
    const now = Date.now()
    appendRuns(root, [run(now, 60, 10, [cycle(now, 1, 1, `hx-z${BAD}`, 'FAILED', 60, 30, {reason: `rc=1: ${BAD}`, title: `T${BAD}`})], {stop_reason: `error${BAD}` as never, blockers: [{id: `hx-z${BAD}`, title: 'x', reason: `why${BAD}`, attempts: 1}]})])
    const r = await helix(root, ['report'])
    expect(r.code).toBe(0)
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    expect(r.stdout).toContain('  hx-z?]0;x??[2J???⏎next — T?]0;x??[2J???⏎next\n    attempt 1 at ')
    expect(r.stdout).toContain('FAILED (rc=1: ?]0;x??[2J???⏎next) — still not closed\n')
    expect(r.stdout).toContain('why?]0;x??[2J???⏎next (1 attempt)')
    expect(r.stdout).toContain('error?]0;x??[2J???⏎next')
  })

  it('--html writes one self-contained page: CSP default-src none, no script, no URL, untrusted text escaped', async () => {
    const root = proj()
    overnight(root, Date.now(), '<img src="http://127.0.0.1:9/x.png"><script>alert(1)</script>')
    const file = path.join(root, 'report.html')
    const r = await helix(root, ['report', '--html', file])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`wrote ${file} (2 runs, 10 cycles, 4 closed)\n`)
    const html = readFileSync(file, 'utf8')
    expect(statSync(file).size).toBeLessThan(200_000)
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`)
    expect(html).not.toMatch(/<script/i)
    expect(html).not.toMatch(/<(img|link|iframe|object|embed|audio|video|source)\b/i)
    expect(html).not.toMatch(/<[a-z]+[^>]*\s(src|href|xlink:href)=/i)
    expect(html).not.toMatch(/url\(|@import/i)
    // the only URL-looking text is the escaped payload in a title
    expect(html.replaceAll('http://127.0.0.1:9/x.png', '')).not.toMatch(/https?:|\/\/[a-z0-9]/i)
    expect(html).toContain('&lt;img src=&quot;http://127.0.0.1:9/x.png&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(html.match(/<rect class="bar /g)).toHaveLength(10)
    expect(html.match(/<circle class="cum-point"/g)).toHaveLength(4)
    expect(readdirSync(root).filter((f) => f.includes('.tmp'))).toEqual([])
  })
})
