import {existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {hostname} from 'node:os'
import path from 'node:path'
import {spawn} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {beads, calls, helix, helixAsync, implOrder, pidGone, project, runState, writeExecutable} from './e2e-helpers.js'
import {makeTempDir, trackProcess} from '../support/tmp.js'
import {BIN, runCli} from '../support/cli.js'

const NO_REVIEW = ['--no-auto-review']

describe('helix run end to end (built CLI, stub agents)', () => {
  it('drains to STOP in priority and dependency order, skipping ineligible beads; --review-every aligns every N completed cycles', () => {
    const p = project(
      [
        {id: 'hx-a', priority: 1},
        {id: 'hx-b', priority: 0, dependencies: [{issue_id: 'hx-b', depends_on_id: 'hx-c', type: 'blocks'}]},
        {id: 'hx-c', priority: 3},
        {id: 'hx-sup', 'superseded-by': 'hx-a'},
        {id: 'hx-inel', 'execution-eligible': false},
        {id: 'hx-lab', labels: ['blocked']},
        {id: 'hx-def', status: 'deferred'},
      ],
      {check: ['next:STOP']},
    )
    const r = helix(p, ['run', ...NO_REVIEW, '--codex', '--review-every', '2'])
    expect(r.code).toBe(0)
    expect(implOrder(p)).toEqual(['hx-a', 'hx-c', 'hx-b'])
    expect(calls(p).map((c) => c.action)).toEqual(['implementation', 'implementation', 'alignment', 'implementation', 'check'])
    const t = beads(p)
    for (const id of ['hx-a', 'hx-b', 'hx-c']) expect(t.get(id)!.status).toBe('closed')
    for (const id of ['hx-sup', 'hx-inel', 'hx-lab']) expect(t.get(id)!.status).toBe('open')
    expect(r.stderr).toContain('helix: stopping after check returned STOP')
    expect(r.stderr).toContain('helix: ═══ run complete: 3 attempted, 3 completed, 0 skipped, 0 tokens ═══')
    // hx-lab is labelled blocked: parked everywhere, so not counted as ready (SPEC 16.2)
    expect(r.stderr).toMatch(/helix: \[\d\d:\d\d:\d\d\] ready=2, cycle=1, issue=hx-a\n/)
    expect(r.stdout).toContain('closing hx-a')
    const s = runState(p)
    expect(s).toMatchObject({phase: 'stopped', stop_reason: 'completed', completed_cycles: 3, attempted_cycles: 3, closed_beads: ['hx-a', 'hx-c', 'hx-b']})
    expect(s.cycles).toHaveLength(3)
    expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
    expect(readFileSync(path.join(p.root, '.helix', 'context.md'), 'utf8')).toMatch(/^# HELIX Execution Context\n[\s\S]*Issue counts: ready=/)
    expect(readdirSync(path.join(p.root, '.helix-logs')).filter((f) => f.endsWith('.log'))).toHaveLength(1)
    // claims are the supervisor's: token passed to the agent
    expect(calls(p).find((c) => c.action === 'implementation')!.env.HELIX_CLAIM_TOKEN).toMatch(/^[0-9a-f]{16}$/)
    // context.md rides along in implementation prompts
    expect((calls(p).find((c) => c.action === 'implementation') as unknown as {prompt: string}).prompt).toContain('# HELIX Execution Context')
  })

  it('batch mode: siblings sharing a spec-id ride along; only the target decides; every closed bead is counted', () => {
    const p = project(
      [
        {id: 'hx-a', priority: 1, 'spec-id': 'FEAT-1'},
        {id: 'hx-b', priority: 1, 'spec-id': 'FEAT-1'},
        {id: 'hx-c', priority: 2, 'spec-id': 'FEAT-1'},
        {id: 'hx-d', priority: 2, 'spec-id': 'FEAT-1'},
        {id: 'hx-z', priority: 3},
      ],
      {implementation: {'hx-a': ['close close-batch'], default: ['close']}, check: ['next:STOP']},
    )
    const r = helix(p, ['run', ...NO_REVIEW])
    expect(r.code).toBe(0)
    // at most 2 siblings join the target
    expect(r.stderr).toMatch(/helix: \[\d\d:\d\d:\d\d\] ready=5, cycle=1, issue=hx-a, batch=3 issues \(hx-a, hx-b, hx-c\)\n/)
    const first = calls(p).find((c) => c.action === 'implementation') as unknown as {prompt: string; bead: string}
    expect(first.bead).toBe('hx-a')
    expect(first.prompt).toMatch(/^BATCH MODE: .*: hx-b, hx-c$/m)
    // the batch beads were closed in cycle 1, so only hx-d and hx-z remain for their own cycles
    expect(implOrder(p)).toEqual(['hx-a', 'hx-d', 'hx-z'])
    const s = runState(p)
    expect(s).toMatchObject({attempted_cycles: 3, completed_cycles: 3})
    expect([...s.closed_beads].sort()).toEqual(['hx-a', 'hx-b', 'hx-c', 'hx-d', 'hx-z'])
  })

  it('failure → backoff → block → report; a second run leaves the blocked bead alone', () => {
    const p = project([{id: 'hx-bad', labels: ['keep'], notes: 'original'}, {id: 'hx-ok', priority: 3}], {implementation: {'hx-bad': ['fail'], default: ['close']}, check: ['next:WAIT']})
    const r = helix(p, ['run', ...NO_REVIEW])
    expect(r.code).toBe(0)
    // HELIX_BACKOFF_SLEEP=0: no wait, so the top-priority bead is retried at once
    expect(implOrder(p)).toEqual(['hx-bad', 'hx-bad', 'hx-bad', 'hx-bad', 'hx-ok'])
    expect(r.stderr).toContain('helix: blocking hx-bad after 4 failed attempts')
    expect(r.stderr).toContain('helix: BLOCKERS (1 issues):')
    expect(r.stderr).toContain('helix:   hx-bad — intractable after 4 attempts with exponential backoff')
    const bad = beads(p).get('hx-bad')!
    expect(bad.labels).toEqual(['keep', 'blocked'])
    expect(bad.notes).toMatch(/^original\n\nBLOCKED \[[^\]]+\]: intractable after 4 attempts with exponential backoff$/)
    expect(bad.status).toBe('open')
    const report = readdirSync(path.join(p.root, '.helix-logs')).find((f) => f.startsWith('blockers-'))!
    const text = readFileSync(path.join(p.root, '.helix-logs', report), 'utf8')
    expect(text).toContain('# HELIX Run Blocker Report')
    expect(text).toContain('## Blocked Issues')
    expect(text).toContain('### hx-bad')
    expect(runState(p)).toMatchObject({stop_reason: 'blocked', skipped: [{id: 'hx-bad', attempts: 4}]})
    const again = helix(p, ['run', ...NO_REVIEW])
    expect(again.code).toBe(0)
    expect(implOrder(p)).toHaveLength(5)
    expect(beads(p).get('hx-bad')!.notes).toBe(bad.notes)
  })

  // One drift end to end (a dependency added through the real CLI by the agent); each of
  // the 6 fingerprint fields is covered by orchestrator.test.ts's DRIFT cases.
  it('drift (closed → reopened) on a dependency the agent added, and a non-drift edit completes', () => {
    const p = project(
      [{id: 'hx-d5'}, {id: 'hx-ok'}, {id: 'hx-other', status: 'closed'}],
      {
        implementation: {
          'hx-ok': ['set:title=renamed set:description=more close'],
          default: ['close'],
        },
        check: ['next:WAIT'],
      },
    )
    // hx-d5: dependency drift through the real CLI, by a command agent
    writeExecutable(
      path.join(p.binDir, 'depagent'),
      `#!/bin/sh\nif [ "$HELIX_ACTION" = implementation ] && [ "$HELIX_BEAD_ID" = hx-d5 ]; then\n  ${process.execPath} ${BIN} tracker dep add "$HELIX_BEAD_ID" hx-other >/dev/null\nfi\nexec ${path.join(p.binDir, 'codex')} "$@"\n`,
    )
    const r = helix(p, ['run', ...NO_REVIEW, '--agent', path.join(p.binDir, 'depagent')])
    expect(r.code).toBe(0)
    const t = beads(p)
    expect(r.stderr).toContain(`helix: queue drift detected for hx-d5; refusing stale completion`)
    expect(t.get('hx-d5')!.status).toBe('open')
    expect(String(t.get('hx-d5')!.notes)).toContain('queue drift: upstream governance fields changed during execution')
    expect(t.get('hx-d5')!.labels ?? []).not.toContain('blocked')
    expect(t.get('hx-ok')!.status).toBe('closed')
    expect(t.get('hx-ok')!.title).toBe('renamed')
    expect(r.stderr).toContain('helix: BLOCKERS (1 issues):')
    expect(runState(p).completed_cycles).toBe(1)
  })

  it('epic focus with auto-close, and decomposition promoting a bead to an epic', () => {
    const p = project(
      [
        {id: 'hx-ep', issue_type: 'epic', priority: 1},
        {id: 'hx-ep1', parent: 'hx-ep', priority: 1},
        {id: 'hx-ep2', parent: 'hx-ep', priority: 3},
        {id: 'hx-mid', priority: 2},
        {id: 'hx-big', priority: 4, labels: ['x']},
      ],
      {implementation: {'hx-big': ['create-children:2', 'close'], default: ['close']}, check: ['next:WAIT']},
    )
    const r = helix(p, ['run', ...NO_REVIEW])
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('helix: epic focus: hx-ep → child hx-ep1')
    expect(r.stderr).toContain('helix: epic hx-ep complete — closing')
    expect(r.stderr).toContain('helix: promoting hx-big to epic (agent created 2 children)')
    const order = implOrder(p)
    expect(order.slice(0, 4)).toEqual(['hx-ep1', 'hx-ep2', 'hx-mid', 'hx-big'])
    expect(order).toHaveLength(6)
    const t = beads(p)
    expect(t.get('hx-ep')!.status).toBe('closed')
    expect(t.get('hx-big')).toMatchObject({issue_type: 'epic', status: 'closed', labels: ['x']})
  })

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
      const r = helix(p, ['run', ...NO_REVIEW])
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
  ])('review %s', (_name, step, code, line) => {
    const p = project([{id: 'hx-r1'}, {id: 'hx-r2'}], {review: Array.isArray(step) ? step : [step], check: ['next:WAIT']})
    const r = helix(p, ['run', '--review-threshold', '0'])
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

  it('summary mode: stdout empty, exact stderr lines, log ranges point at exactly the agent output', () => {
    const p = project([{id: 'hx-s1'}, {id: 'hx-s2'}], {implementation: {'hx-s2': ['fail'], default: ['close']}, check: ['next:WAIT']})
    const r = helix(p, ['run', '--summary', ...NO_REVIEW, '--max-cycles', '1'])
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
    expect(lines).toHaveLength(5)
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

  it('--claude: stream-json agent, tokens summed into the run, log range in summary mode', () => {
    const p = project([{id: 'hx-c1'}], {implementation: ['tokens:1234 close']})
    const r = helix(p, ['run', '--claude', '-s', '--no-auto-review', '--max-cycles', '1'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/claude complete \(rc=0, \d+s, 1,234 tokens\) — log L\d+–L\d+ in \//)
    expect(r.stderr).toContain('cycle 1: hx-c1 → COMPLETE (1 of 1 cycles completed, 1,234 tokens)')
    expect(calls(p)[0].as ?? 'claude').toBe('claude')
    expect(runState(p)).toMatchObject({agent: 'claude', total_tokens: 1234})
  })

  it('--model goes to the implementation agent, not to a review agent of another kind; the claim token reaches the agent', () => {
    const p = project([{id: 'hx-m1'}], {check: ['next:WAIT']})
    const r = helix(p, ['run', '--model', 'm-one', '--effort', 'low', '--review-threshold', '0'])
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

  it('acceptance gate files a de-duplicated failure bead', () => {
    const p = project([{id: 'hx-g1'}], {check: ['next:WAIT']})
    writeExecutable(path.join(p.root, 'scripts', 'check-acceptance-demo.sh'), '#!/bin/sh\necho failing\nexit 1\n')
    writeExecutable(path.join(p.root, 'scripts', 'check-acceptance-ok.sh'), '#!/bin/sh\nexit 0\n')
    const r = helix(p, ['run', ...NO_REVIEW])
    expect(r.stderr).toContain('helix: acceptance criteria not met after cycle 1 — failures filed as tracker issues')
    const filed = [...beads(p).values()].filter((b) => String(b.title).startsWith('Acceptance failure:'))
    expect(filed[0]).toMatchObject({title: 'Acceptance failure: check-acceptance-demo.sh after hx-g1', labels: ['helix', 'acceptance-failure'], 'spec-id': 'check-acceptance-demo.sh', acceptance: 'check-acceptance-demo.sh passes cleanly'})
    expect(filed).toHaveLength(1)
  })

  it('mutex: a live holder → exit 2, tracker untouched, denied count incremented', async () => {
    const sleeper = trackProcess(spawn('sleep', ['60'], {stdio: 'ignore'}))
    try {
      const p = project([{id: 'hx-m'}])
      // the holder's recorded start must not predate its process (a pid reused
      // by a later process is not a live run: see the next test)
      const started = new Date().toISOString()
      writeFileSync(path.join(p.root, '.ddx', 'helix.pid'), `${sleeper.pid} ${started}\n`)
      const before = readFileSync(p.tracker, 'utf8')
      const r = helix(p, ['run'])
      expect(r.code).toBe(2)
      expect(r.stderr).toBe(`helix run: already running (pid=${sleeper.pid}, started=${started})\n`)
      expect(readFileSync(p.tracker, 'utf8')).toBe(before)
      expect(runState(p).parallel_run_denied_count).toBe(1)
      expect(calls(p)).toEqual([])
      // a dead holder's file is replaced
      writeFileSync(path.join(p.root, '.ddx', 'helix.pid'), `999999 2026-01-01T00:00:00.000Z\n`)
      const ok = helix(p, ['run', ...NO_REVIEW, '--max-cycles', '1'])
      expect(ok.code).toBe(0)
      expect(runState(p).parallel_run_denied_count).toBe(1)
    } finally {
      sleeper.kill('SIGKILL')
    }
  })

  it('mutex: a pid reused by an unrelated later process is not a live run', async () => {
    const sleeper = trackProcess(spawn('sleep', ['60'], {stdio: 'ignore'}))
    try {
      const p = project([{id: 'hx-r'}])
      // the file says the run started long before this `sleep` process existed
      writeFileSync(path.join(p.root, '.ddx', 'helix.pid'), `${sleeper.pid} 2026-01-01T00:00:00.000Z\n`)
      const r = helix(p, ['run', ...NO_REVIEW, '--max-cycles', '1'])
      expect(r.code).toBe(0)
      expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
      expect(runState(p).parallel_run_denied_count).toBe(0)
    } finally {
      sleeper.kill('SIGKILL')
    }
  })

  it('SIGTERM in the middle of an agent call: 143, bead unclaimed, no agent left, interrupted, pid file gone', async () => {
    const p = project([{id: 'hx-hang'}], {implementation: ['hang']})
    const {child, done} = helixAsync(p, ['run', ...NO_REVIEW])
    const started = Date.now()
    while (!calls(p).some((c) => c.action === 'implementation')) {
      if (Date.now() - started > 20_000) throw new Error('agent never started')
      await new Promise((r) => setTimeout(r, 50))
    }
    // the claim is the supervisor's: its pid, its start token, the token handed to the agent
    const claimed = beads(p).get('hx-hang')!
    expect(claimed).toMatchObject({status: 'in_progress', owner: 'helix', 'claimed-pid': child.pid})
    expect(String(claimed['claimed-start'])).toMatch(/^\d+$/)
    expect(claimed['claim-token']).toBe(calls(p)[0].env.HELIX_CLAIM_TOKEN)
    child.kill('SIGTERM')
    const r = await done
    expect(r.code).toBe(143)
    const b = beads(p).get('hx-hang')!
    expect(b.status).toBe('open')
    expect(b['claim-token']).toBeUndefined()
    expect(pidGone(calls(p)[0].pid)).toBe(true)
    expect(runState(p).stop_reason).toBe('interrupted')
    expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
    expect(r.stderr).toContain('helix: ═══ run complete: 1 attempted, 0 completed, 0 skipped')
  })

  it('--dry-run prints the command and prompt and changes nothing', () => {
    const p = project([{id: 'hx-dry'}])
    const before = readFileSync(p.tracker, 'utf8')
    const r = helix(p, ['run', '--dry-run'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('--dangerously-bypass-approvals-and-sandbox exec -C')
    expect(r.stdout).toContain('Implementation target: hx-dry')
    expect(readFileSync(p.tracker, 'utf8')).toBe(before)
    expect(existsSync(path.join(p.root, '.helix-logs'))).toBe(false)
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    expect(calls(p)).toEqual([])
  })

  it('helix build runs one cycle on the selected bead', () => {
    const p = project([{id: 'hx-first', priority: 0}, {id: 'hx-pick', title: 'Fix the Widget'}])
    const r = helix(p, ['build', 'widget', ...NO_REVIEW])
    expect(r.code).toBe(0)
    expect(implOrder(p)).toEqual(['hx-pick'])
    expect(beads(p).get('hx-first')!.status).toBe('open')
    const none = helix(p, ['build', 'nothing-matches'])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain("helix: no ready issue matches 'nothing-matches'")
  })

  it('bad flags: one line, exit 1, nothing on disk', () => {
    const p = project([{id: 'hx-x'}])
    const r = helix(p, ['run', '--max-cycles', 'lots'])
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    // the one line says what is wrong with the value, not just which flag oclif was parsing
    for (const args of [['run', '--max-cycles', '-1'], ['run', '--review-every', 'x'], ['build', '--review-threshold', '-5']]) {
      const bad = helix(p, args)
      expect(bad.code, args.join(' ')).toBe(1)
      expect(bad.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1)
      expect(bad.stderr, args.join(' ')).toMatch(new RegExp(`^helix: invalid ${args[1]}: .*(integer|greater than or equal to 0).*\\n$`))
    }
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    const missing = helix(p, ['run', '--agent', 'no-such-agent-xyz'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe("helix: agent 'no-such-agent-xyz' not found on PATH\n")
    expect(existsSync(path.join(p.root, '.ddx', 'helix.pid'))).toBe(false)
    expect(existsSync(path.join(p.root, '.ddx', 'run-state.json'))).toBe(false)
    expect(existsSync(path.join(p.root, '.helix-logs'))).toBe(false)
    // in a directory that is not a helix project, nothing at all is created
    const bare = makeTempDir('helix-bare-')
    const inBare = runCli(['run', '--agent', 'no-such-agent-xyz'], {cwd: bare})
    expect(inBare.code).toBe(1)
    expect(readdirSync(bare)).toEqual([])
  })
})
