import {describe, expect, it} from 'vitest'
import {runLoop, DRIFT_REASON} from '../../src/loop/orchestrator.js'
import type {BlockerEntry} from '../../src/loop/ports.js'
import {TITLE_UNKNOWN} from '../../src/loop/run.js'
import {check, closeIt, FakeLanding, harness, lastState, opts} from './fakes.js'

const B = (id: string, extra: Record<string, unknown> = {}) => ({id, title: `title ${id}`, ...extra})

describe('start', () => {
  it('live mutex holder: exit 2, message, denied count bumped, tracker untouched', async () => {
    const h = harness([B('a')], {implementation: closeIt}, {held: {pid: 77, started: '2026-01-01T00:00:00Z'}})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(2)
    expect(h.both).toEqual(['helix run: already running (pid=77, started=2026-01-01T00:00:00Z)'])
    expect(lastState(h).parallel_run_denied_count).toBe(1)
    expect(h.tracker.calls).toEqual([])
    expect(h.calls).toEqual([])
  })

  it('missing agent: exit 1 with the SPEC message, nothing dispatched, mutex never taken, no state written', async () => {
    const h = harness([B('a')], {}, {missingAgent: true})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(h.both).toEqual(["helix: agent 'codex' not found on PATH"])
    expect(h.calls).toEqual([])
    expect(h.mutexReleased).toBe(false)
    expect(h.states).toEqual([])
  })

  it('runs orphan recovery and writes context at start', async () => {
    const h = harness([], {check: check('WAIT')})
    await runLoop(h.deps, opts())
    expect(h.recoveries).toBe(1)
    expect(h.contexts[0]).toBe(null)
    expect(h.states[0].phase).toBe('starting')
  })
})

describe('drain to stop', () => {
  it('completes beads in priority and dependency order, then stops on check STOP', async () => {
    const h = harness(
      [B('c', {priority: 0, dependencies: [{issue_id: 'c', depends_on_id: 'b', type: 'blocks'}]}), B('b', {priority: 3}), B('a', {priority: 1})],
      {implementation: closeIt, check: check('STOP')},
    )
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(0)
    expect(r.stopReason).toBe('completed')
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['a', 'b', 'c'])
    const s = lastState(h)
    expect(s.completed_cycles).toBe(3)
    expect(s.attempted_cycles).toBe(3)
    expect(s.closed_beads).toEqual(['a', 'b', 'c'])
    expect(s.cycles.map((c) => c.outcome)).toEqual(['COMPLETE', 'COMPLETE', 'COMPLETE'])
    expect(h.both).toContain('helix: stopping after check returned STOP')
    expect(h.both).toContain('helix: ═══ run complete: 3 attempted, 3 completed, 0 skipped, 40 tokens ═══')
    expect(h.normal).toContain('helix: [10:00:00] ready=2, cycle=1, issue=a'.replace('10:00:00', h.normal.find((l) => l.includes('cycle=1'))!.slice(8, 16)))
    expect(h.mutexReleased).toBe(true)
    expect(s.phase).toBe('stopped')
    expect(s.last_run?.completed_cycles).toBe(3)
  })

  it('skips ineligible beads: superseded, execution-eligible false, blocked label, epic with children, closed', async () => {
    const h = harness(
      [
        B('s', {'superseded-by': 'x'}),
        B('e', {'execution-eligible': false}),
        B('l', {labels: ['blocked']}),
        B('ep', {issue_type: 'epic'}),
        B('kid', {parent: 'ep', status: 'closed'}),
        B('done', {status: 'closed'}),
        B('ok'),
      ],
      {implementation: closeIt, check: check('WAIT')},
    )
    await runLoop(h.deps, opts())
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['ok'])
    expect(h.both).toContain('helix: stopping after check returned WAIT')
  })

  it('tiers: governed non-epics before other non-epics before epics', async () => {
    const h = harness([B('plain', {priority: 0}), B('epic0', {priority: 0, issue_type: 'epic'}), B('gov', {priority: 1, acceptance: 'x'})], {implementation: closeIt, check: check('WAIT')})
    await runLoop(h.deps, opts())
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['gov', 'plain', 'epic0'])
  })
})

describe('max cycles', () => {
  it('counts completed cycles only', async () => {
    let n = 0
    const h = harness([B('a'), B('b'), B('c')], {
      implementation: (c, t) => {
        n++
        if (n === 1) return {rc: 1}
        closeIt(c, t)
      },
    }, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    const r = await runLoop(h.deps, opts({maxCycles: 2}))
    expect(r.stopReason).toBe('max_cycles')
    expect(h.both).toContain('helix: reached max cycles (2)')
    const s = lastState(h)
    expect(s.attempted_cycles).toBe(3)
    expect(s.completed_cycles).toBe(2)
  })
})

describe('outcomes', () => {
  it('SALVAGED: closed with rc != 0 counts as completed', async () => {
    const h = harness([B('a')], {implementation: (c, t) => (closeIt(c, t), {rc: 3}), check: check('WAIT')}, {})
    const r = await runLoop(h.deps, opts({summary: true}))
    expect(r.exitCode).toBe(0)
    expect(lastState(h).completed_cycles).toBe(1)
    expect(h.both.some((l) => /cycle 1: a → SALVAGED \(agent rc=3 but issue closed\)$/.test(l))).toBe(true)
  })

  it('summary lines carry log ranges and the absolute log path', async () => {
    const h = harness([B('a')], {implementation: closeIt, check: check('WAIT')})
    await runLoop(h.deps, opts({summary: true}))
    const v = h.summaryView()
    expect(v[0]).toMatch(/^helix: \[\d\d:\d\d:\d\d\] cycle 1: a \(1 ready\) — title a$/)
    expect(v[1]).toMatch(/^helix: \[\d\d:\d\d:\d\d\] codex complete \(rc=0, 1s, 10 tokens\) — log L\d+–L\d+ in \/abs\/\.helix-logs\/helix-20260101-000000\.log$/)
    expect(v[2]).toMatch(/cycle 1: a → COMPLETE \(1 of 1 cycles completed, 10 tokens\)$/)
  })

  it('an agent helix stopped (SIGTERM) is "killed", not "complete (rc=143)"', async () => {
    const ac = new AbortController()
    const h = harness([B('a')], {
      implementation: async (c) => {
        queueMicrotask(() => ac.abort('SIGTERM'))
        if (!c.signal?.aborted) await new Promise((res) => c.signal?.addEventListener('abort', res, {once: true}))
        return {rc: 143, end: {end: 'aborted'}}
      },
    })
    expect(await runLoop(h.deps, opts({summary: true, signal: ac.signal}))).toMatchObject({exitCode: 143})
    const v = h.summaryView()
    expect(v.some((l) => /codex killed \(stopped by helix after \d+s, 10 tokens\) — log L\d+–L\d+ in /.test(l))).toBe(true)
    expect(v.some((l) => / complete \(rc=143/.test(l))).toBe(false)
  })

  it('a log path with a line break stays on the one summary line (sanitized)', async () => {
    const h = harness([B('a')], {implementation: closeIt, check: check('WAIT')})
    const open = h.deps.openLog.bind(h.deps)
    h.deps.openLog = async () => Object.assign(await open(), {path: '/abs/odd dir\nline/.helix-logs/x.log'})
    await runLoop(h.deps, opts({summary: true}))
    expect(h.summaryView()[1]).toMatch(/— log L\d+–L\d+ in \/abs\/odd dir⏎line\/\.helix-logs\/x\.log$/)
  })

  it.each([
    ['spec-id', {'spec-id': 'S2'}],
    ['parent', {parent: 'p2'}],
    ['superseded-by', {'superseded-by': 'zz'}],
    ['replaces', {replaces: 'old'}],
    ['dependencies', {dependencies: [{issue_id: 'a', depends_on_id: 'p2', type: 'blocks'}]}],
    ['execution-eligible', {'execution-eligible': false}],
  ])('DRIFT on %s: closed → reopened with note, skipped, blocker listed', async (_f, change) => {
    const h = harness([B('a', {'spec-id': 'S1'}), B('p2', {status: 'closed'})], {
      implementation: (c, t) => {
        Object.assign(t.get('a'), change)
        t.get('a').status = 'closed'
      },
      check: check('WAIT'),
    })
    const r = await runLoop(h.deps, opts())
    expect(h.both).toContain('helix: queue drift detected for a; refusing stale completion')
    expect(h.tracker.calls).toContain('reopen a')
    expect(h.tracker.get('a').status).toBe('open')
    expect(String(h.tracker.get('a').notes)).toContain(DRIFT_REASON)
    expect(lastState(h).skipped).toEqual([{id: 'a', reason: DRIFT_REASON, attempts: 0}])
    expect(lastState(h).completed_cycles).toBe(0)
    expect(r.stopReason).toBe('blocked')
    expect(h.both).toContain('helix: BLOCKERS (1 issue):')
    expect(h.both).toContain(`helix:   a — ${DRIFT_REASON}`)
    expect(h.reports).toBe(1)
    expect(h.tracker.get('a').labels ?? []).not.toContain('blocked')
  })

  it('blocker report when the tracker cannot be read at the end: ids and reasons kept, titles marked unknown, the error said', async () => {
    let broken = false
    const wait = check('WAIT')
    const h = harness([B('a', {'spec-id': 'S1'})], {
      implementation: (c, t) => {
        t.get('a')['superseded-by'] = 'zz' // drift: reopened and skipped
        t.get('a').status = 'closed'
      },
      check: (c, t) => {
        broken = true
        return wait(c, t)
      },
    })
    const read = h.deps.tracker.read.bind(h.deps.tracker)
    h.deps.tracker.read = async () => {
      if (broken) throw new Error('EACCES: permission denied, open .ddx/beads.jsonl')
      return read()
    }
    let entries: BlockerEntry[] = []
    h.deps.blockerReport = async (a) => {
      entries = a.entries
      return '/abs/.helix-logs/blockers-x.md'
    }
    const r = await runLoop(h.deps, opts())
    expect(r.stopReason).toBe('blocked')
    expect(entries).toEqual([{id: 'a', title: TITLE_UNKNOWN, reason: DRIFT_REASON, attempts: 0}])
    expect(h.both).toContain('helix: cannot read the tracker for blocker titles: EACCES: permission denied, open .ddx/beads.jsonl')
    expect(h.both).toContain(`helix:   a — ${DRIFT_REASON}`)
  })

  it('non-drift edits (title, labels, description, notes) still COMPLETE', async () => {
    const h = harness([B('a', {'spec-id': ''})], {
      implementation: (c, t) => {
        Object.assign(t.get('a'), {title: 'new', labels: ['x'], description: 'd', notes: 'n'})
        t.get('a').status = 'closed'
      },
      check: check('WAIT'),
    })
    await runLoop(h.deps, opts())
    expect(lastState(h).completed_cycles).toBe(1)
  })

  it('DRIFT without close: unclaimed; vanished bead reported as disappeared', async () => {
    const h = harness([B('a'), B('b')], {
      implementation: (c, t) => {
        if (c.beadId === 'a') t.get('a').parent = 'zzz'
        else t.beads = t.beads.filter((x) => x.id !== 'b')
      },
      check: check('WAIT'),
    })
    await runLoop(h.deps, opts())
    expect(h.tracker.get('a').status).toBe('open')
    expect(h.both).toContain('helix: queue drift detected for b: bead disappeared')
    expect(lastState(h).skipped.map((s) => s.id)).toEqual(['a', 'b'])
  })

  it('DECOMPOSED: promoted to epic, focus moves to it, children done, epic auto-closed', async () => {
    const h = harness([B('big', {labels: ['k'], 'spec-id': 'S'})], {
      implementation: (c, t) => {
        if (c.beadId === 'big') {
          t.beads.push({id: 'big-1', title: 'k1', status: 'open', parent: 'big', created_at: '2026-01-03T00:00:00Z'})
          t.beads.push({id: 'big-2', title: 'k2', status: 'open', parent: 'big', created_at: '2026-01-04T00:00:00Z'})
          return
        }
        closeIt(c, t)
      },
      check: check('WAIT'),
    })
    await runLoop(h.deps, opts())
    expect(h.normal).toContain('helix: promoting big to epic (agent created 2 children)')
    expect(h.tracker.get('big').issue_type).toBe('epic')
    expect(h.tracker.get('big').labels).toEqual(['k'])
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['big', 'big-1', 'big-2'])
    expect(h.normalView()).toContain('helix: epic big complete — closing')
    expect(h.tracker.get('big').status).toBe('closed')
    const s = lastState(h)
    expect(s.attempts.big).toBeUndefined()
    expect(s.completed_cycles).toBe(2)
  })

  it('epic focus: selecting a child focuses its epic; runs children first; auto-review of the epic', async () => {
    const h = harness(
      [B('ep', {issue_type: 'epic', priority: 3}), B('c1', {parent: 'ep', priority: 3}), B('c2', {parent: 'ep', priority: 4}), B('other', {priority: 3, created_at: '2026-01-05T00:00:00Z'})],
      {implementation: closeIt, review: () => ({text: 'REVIEW_STATUS: CLEAN'}), check: check('WAIT')},
    )
    await runLoop(h.deps, opts({autoReview: true, reviewThreshold: 0}))
    expect(h.normal).toContain('helix: epic focus: ep → child c1')
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['c1', 'c2', 'other'])
    expect(h.calls.filter((c) => c.action === 'review').map((c) => c.beadId)).toEqual(['c1', 'c2', 'ep', 'other'])
    expect(h.contexts).toContain('ep')
  })

  it('batching: up to 2 siblings sharing parent/spec-id/area label join, every closed one counted', async () => {
    const h = harness(
      [B('t', {'spec-id': 'S', labels: ['area:x'], priority: 0}), B('s1', {'spec-id': 'S'}), B('s2', {labels: ['area:x']}), B('s3', {'spec-id': 'S'}), B('u')],
      {
        implementation: (c, t) => {
          closeIt(c, t)
          if (c.beadId === 't') t.get('s1').status = 'closed'
        },
        check: check('WAIT'),
      },
    )
    await runLoop(h.deps, opts({maxCycles: 1}))
    expect(h.calls[0].prompt).toContain('BATCH MODE s1,s2')
    expect(h.normal.some((l) => l.endsWith('issue=t, batch=3 issues (t, s1, s2)'))).toBe(true)
    expect(new Set(lastState(h).closed_beads)).toEqual(new Set(['t', 's1']))
  })
})

describe('the end of a run names a modified tracker file (issue 29)', () => {
  it('after a worktree run the note comes after the run-complete line; a failing check of it is not fatal', async () => {
    const h = harness([B('a')], {implementation: (c, t) => closeIt(c, t), check: check('WAIT')}, {landing: new FakeLanding()})
    h.deps.trackerFileNote = async () => "helix: .ddx/beads.jsonl has this run's tracker changes, not committed; commit them with your work"
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r.exitCode).toBe(0)
    const done = h.both.findIndex((l) => l.includes('run complete'))
    const note = h.both.findIndex((l) => l.startsWith('helix: .ddx/beads.jsonl has'))
    expect(done).toBeGreaterThanOrEqual(0)
    expect(note).toBeGreaterThan(done)

    const broken = harness([B('a')], {implementation: (c, t) => closeIt(c, t), check: check('WAIT')}, {landing: new FakeLanding()})
    broken.deps.trackerFileNote = async () => {
      throw new Error('git exploded')
    }
    expect((await runLoop(broken.deps, opts({workers: 2}))).exitCode).toBe(0)
  })

  it('one worker (the agent commits in the checkout) gets no such note', async () => {
    const h = harness([B('a')], {implementation: (c, t) => closeIt(c, t), check: check('WAIT')})
    let asked = 0
    h.deps.trackerFileNote = async () => {
      asked++
      return 'helix: .ddx/beads.jsonl has this run’s tracker changes'
    }
    expect((await runLoop(h.deps, opts())).exitCode).toBe(0)
    expect(asked).toBe(0)
    expect(h.both.some((l) => l.startsWith('helix: .ddx/beads.jsonl has'))).toBe(false)
  })
})

describe('failure, backoff, block', () => {
  it('FAILED x4: backoff 5,10,20 requested, then blocked with label + note once, report, stop reason blocked', async () => {
    const h = harness([B('a', {labels: ['keep'], notes: 'orig'})], {implementation: () => ({rc: 1, text: 'tests fail'}), check: check('WAIT')})
    const r = await runLoop(h.deps, opts())
    expect(h.calls.filter((c) => c.action === 'implementation')).toHaveLength(4)
    expect(h.sleeps).toEqual([5000, 10000, 20000])
    expect(h.normal).toContain('helix: implementation failed during cycle 1 (will not count toward completed cycles): rc=1: tests fail')
    expect(h.normal).toContain('helix: blocking a after 4 failed attempts')
    expect(h.summary.some((l) => /BLOCKED a after 4 attempts$/.test(l))).toBe(true)
    const a = h.tracker.get('a')
    expect(a.labels).toEqual(['keep', 'blocked'])
    // SPEC 22.2: 5.6's words, then the last attempt's reason
    expect(a.notes).toMatch(/^orig\n\nBLOCKED \[[^\]]+\]: intractable after 4 attempts with exponential backoff; last: rc=1: tests fail$/)
    expect(a.status).toBe('open')
    expect(r.stopReason).toBe('blocked')
    expect(lastState(h).skipped).toEqual([{id: 'a', reason: 'intractable after 4 attempts with exponential backoff; last: rc=1: tests fail', attempts: 4}])
    expect(h.recoveries).toBe(5)
  })

  it('non-completing attempts use the non-completing reason and message', async () => {
    const h = harness([B('a')], {implementation: () => ({rc: 0}), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    await runLoop(h.deps, opts())
    expect(h.normal).toContain('helix: cycle 1 did not complete a tracked issue; completed cycles remain 0')
    expect(h.normal).toContain('helix: blocking a after 4 non-completing attempts')
    expect(lastState(h).skipped[0].reason).toBe('failed to complete after 4 attempts with exponential backoff; last: bead still open')
  })

  it('backoff does not block other ready work', async () => {
    const h = harness([B('a', {priority: 0}), B('b', {priority: 1})], {
      implementation: (c, t) => (c.beadId === 'a' && h.calls.filter((x) => x.beadId === 'a').length === 1 ? {rc: 1} : closeIt(c, t)),
      check: check('WAIT'),
    })
    await runLoop(h.deps, opts())
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['a', 'b', 'a'])
    // b ran meanwhile; only then helix waited out the rest of a's 5 s backoff
    expect(h.sleeps).toEqual([4000])
    expect(lastState(h).completed_cycles).toBe(2)
  })

  it('note is not appended twice when already present', async () => {
    const h = harness([B('a', {notes: 'BLOCKED [2020-01-01T00:00:00.000Z]: intractable after 4 attempts with exponential backoff; last: rc=1', labels: []})], {implementation: () => ({rc: 1}), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    await runLoop(h.deps, opts())
    expect(h.tracker.calls.filter((c) => c.startsWith('note'))).toEqual([])
    expect(h.tracker.calls).toContain('label a blocked')
  })

  it('a blocked child blocks its focused epic', async () => {
    const h = harness([B('ep', {issue_type: 'epic'}), B('c1', {parent: 'ep'}), B('c2', {parent: 'ep'})], {implementation: () => ({rc: 1}), check: check('WAIT')}, {env: {HELIX_BACKOFF_SLEEP: '0'}})
    await runLoop(h.deps, opts())
    const s = lastState(h)
    expect(s.skipped).toContainEqual({id: 'ep', reason: 'child c1 intractable after 4 attempts; last: rc=1', attempts: 0})
    expect(h.calls.filter((c) => c.beadId === 'c2')).toHaveLength(0)
    expect(h.tracker.get('ep').labels).toContain('blocked')
  })

  it('claim conflict: skipped for the iteration, no attempt counted', async () => {
    const h = harness([B('a', {priority: 0}), B('b')], {implementation: closeIt, check: check('WAIT')})
    h.tracker.claimConflicts.add('a')
    await runLoop(h.deps, opts())
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['b'])
    expect(lastState(h).attempted_cycles).toBe(1)
    expect(lastState(h).attempts).toEqual({})
  })

  it('the claim token goes to the agent', async () => {
    const h = harness([B('a')], {implementation: closeIt, check: check('WAIT')})
    await runLoop(h.deps, opts())
    expect(h.calls[0].claimToken).toBe('tok-a')
  })
})

describe('queue drain', () => {
  it('check failing → exit 1', async () => {
    const h = harness([], {check: () => ({rc: 2})})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(h.both).toContain('helix: check failed after queue drain')
    expect(r.stopReason).toBe('error')
  })

  it('no trailer → exit 1', async () => {
    const h = harness([], {check: () => ({text: 'NEXT_ACTION: BUILDING'})})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(h.both).toContain('helix: unable to determine NEXT_ACTION from check output')
  })

  it.each(['WAIT', 'GUIDANCE'])('%s stops with exit 0', async (code) => {
    const h = harness([], {check: check(code)})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(0)
    expect(h.both).toContain(`helix: stopping after check returned ${code}`)
  })

  it('BUILD twice with nothing selectable → orphan recovery → stop', async () => {
    const h = harness([], {check: check('BUILD')})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(0)
    expect(h.calls.filter((c) => c.action === 'check')).toHaveLength(2)
    expect(h.recoveries).toBe(2)
    expect(h.both).toContain('helix: no selectable issues after orphan recovery — stopping')
  })

  it('BUILD breaker continues when recovery freed beads', async () => {
    let round = 0
    const h = harness([B('a', {status: 'in_progress'})], {implementation: closeIt, check: check('BUILD', 'BUILD', 'WAIT')}, {recover: () => (round++ === 1 ? ['a'] : [])})
    await runLoop(h.deps, opts())
    expect(h.calls.map((c) => c.action)).toEqual(['check', 'check', 'implementation', 'check'])
  })

  it.each([
    ['DESIGN', 'plan', 'design'],
    ['POLISH', 'polish', 'polish'],
  ])('%s runs its action, bounded to 3 passes without new work', async (code, action, label) => {
    const h = harness([], {check: check(code)})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(0)
    expect(h.calls.filter((c) => c.action === action)).toHaveLength(3)
    expect(h.normal).toContain(`helix: queue drained, running ${label}`)
    expect(h.both).toContain(`helix: stopping: check returned ${code} 3 times without new ready work`)
  })

  it('DESIGN that produces work goes back to selection', async () => {
    const h = harness([], {check: check('DESIGN', 'WAIT'), plan: (c, t) => void t.beads.push({id: 'n1', title: 'n', status: 'open'}), implementation: closeIt})
    await runLoop(h.deps, opts())
    expect(h.calls.map((c) => c.action)).toEqual(['check', 'plan', 'implementation', 'check'])
  })

  it('failing drain action → exit 1', async () => {
    const h = harness([], {check: check('POLISH'), polish: () => ({rc: 1})})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(h.both).toContain('helix: polish failed after queue drain')
  })

  it('ALIGN with auto-align runs once, then stops', async () => {
    const h = harness([], {check: check('ALIGN')})
    await runLoop(h.deps, opts({autoAlign: true}))
    expect(h.calls.map((c) => c.action)).toEqual(['check', 'alignment', 'check'])
    expect(h.normal).toContain('helix: queue drained, running alignment')
    expect(h.both).toContain('helix: stopping after check returned ALIGN')
  })

  it('ALIGN without auto-align stops at once', async () => {
    const h = harness([], {check: check('ALIGN')})
    await runLoop(h.deps, opts({autoAlign: false}))
    expect(h.calls.map((c) => c.action)).toEqual(['check'])
  })

  it('BACKFILL needs the status trailer and an existing report; second time stops', async () => {
    const h = harness([], {check: check('BACKFILL'), backfill: () => ({text: 'BACKFILL_STATUS: COMPLETE\nBACKFILL_REPORT: docs/r.md'})}, {existing: ['docs/r.md']})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(0)
    expect(h.calls.map((c) => c.action)).toEqual(['check', 'backfill', 'check'])
    expect(h.both).toContain('helix: stopping after check returned BACKFILL')
  })

  it('BACKFILL with a missing report file fails', async () => {
    const h = harness([], {check: check('BACKFILL'), backfill: () => ({text: 'BACKFILL_STATUS: COMPLETE\nBACKFILL_REPORT: docs/r.md'})})
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(1)
    expect(h.both).toContain('helix: backfill failed after queue drain')
  })

  it('STOP with auto-align runs one alignment before stopping; continues when it produced work', async () => {
    let made = false
    const h = harness([], {
      check: check('STOP'),
      alignment: (c, t) => {
        if (!made) t.beads.push({id: 'x', title: 'x', status: 'open'})
        made = true
      },
      implementation: closeIt,
    })
    await runLoop(h.deps, opts({autoAlign: true}))
    expect(h.calls.map((c) => c.action)).toEqual(['check', 'alignment', 'implementation', 'check', 'alignment'])
    expect(h.normal).toContain('helix: queue empty, running alignment before stopping')
    expect(h.both).toContain('helix: stopping after check returned STOP')
  })

  it('only backing-off beads left: sleeps until the earliest is eligible instead of draining', async () => {
    let n = 0
    const h = harness([B('a')], {implementation: (c, t) => (n++ === 0 ? {rc: 1} : closeIt(c, t)), check: check('WAIT')})
    await runLoop(h.deps, opts())
    expect(h.sleeps).toEqual([5000])
    expect(h.calls.map((c) => c.action)).toEqual(['implementation', 'implementation', 'check'])
  })
})

describe('gates', () => {
  it('acceptance failure files one de-duplicated bead per script', async () => {
    const h = harness([B('a'), B('b')], {implementation: closeIt, check: check('WAIT')}, {acceptance: {'/r/scripts/check-acceptance-x.sh': 1, '/r/scripts/check-acceptance-y.sh': 0}})
    await runLoop(h.deps, opts())
    const filed = h.tracker.beads.filter((b) => String(b.title).startsWith('Acceptance failure'))
    expect(filed.map((b) => b.title)).toEqual(['Acceptance failure: check-acceptance-x.sh after a', 'Acceptance failure: check-acceptance-x.sh after b'])
    expect(filed[0].labels).toEqual(['helix', 'acceptance-failure'])
    expect(filed[0]['spec-id']).toBe('check-acceptance-x.sh')
    expect(filed[0].acceptance).toBe('check-acceptance-x.sh passes cleanly')
    expect(h.normal).toContain('helix: acceptance criteria not met after cycle 1 — failures filed as tracker issues')
    expect(lastState(h).injected_supervisory?.map((x) => x.type)).toEqual(['acceptance-failure', 'acceptance-failure'])
  })

  it('acceptance dedupe: an open bead with that title already exists', async () => {
    const h = harness([B('a'), B('old', {title: 'Acceptance failure: check-acceptance-x.sh after a', 'execution-eligible': false})], {implementation: closeIt, check: check('WAIT')}, {acceptance: {'/r/scripts/check-acceptance-x.sh': 1}})
    await runLoop(h.deps, opts())
    expect(h.tracker.calls.filter((c) => c.startsWith('create'))).toEqual([])
  })

  it('review CLEAN continues; uses the review agent', async () => {
    const h = harness([B('a')], {implementation: closeIt, review: () => ({text: 'REVIEW_STATUS: CLEAN'}), check: check('WAIT')})
    const r = await runLoop(h.deps, opts({autoReview: true}))
    expect(r.exitCode).toBe(0)
    expect(h.calls[1]).toMatchObject({action: 'review', agent: 'claude'})
    expect(h.normal.some((l) => /^helix: \[\d\d:\d\d:\d\d\] post-implementation review of a$/.test(l))).toBe(true)
  })

  it('review ISSUES_FOUND reports counts and continues', async () => {
    const h = harness([B('a')], {
      implementation: closeIt,
      review: (c, t) => {
        t.beads.push({id: 'f1', title: 'finding', status: 'open', labels: ['review-finding'], 'execution-eligible': false})
        return {text: 'REVIEW_STATUS: ISSUES_FOUND\nISSUES_COUNT: 2\nFINDINGS_FILED: 1'}
      },
      check: check('WAIT'),
    })
    const r = await runLoop(h.deps, opts({autoReview: true}))
    expect(r.exitCode).toBe(0)
    expect(h.normal).toContain('helix: review reported 2 issue(s), 1 filed as tracker issues')
    expect(lastState(h).completed_cycles).toBe(1)
    expect(lastState(h).injected_supervisory).toMatchObject([{id: 'f1', type: 'review-finding', triggering_bead: 'a', triggering_cycle: 1}])
  })

  it.each([['missing', ''], ['garbage', 'REVIEW_STATUS: MAYBE']])('review %s → stop exit 1', async (_n, text) => {
    const h = harness([B('a'), B('b')], {implementation: closeIt, review: () => ({text}), check: check('WAIT')})
    const r = await runLoop(h.deps, opts({autoReview: true}))
    expect(r.exitCode).toBe(1)
    expect(h.both).toContain('helix: review output missing REVIEW_STATUS trailer')
    expect(h.calls.filter((c) => c.action === 'implementation')).toHaveLength(1)
  })

  it('review threshold: small change skips review; 3 files or N lines triggers it; 0 always', async () => {
    const small = harness([B('a')], {implementation: closeIt, check: check('WAIT')}, {changed: {lines: 5, files: 2}})
    await runLoop(small.deps, opts({autoReview: true}))
    expect(small.calls.map((c) => c.action)).toEqual(['implementation', 'check'])
    const files = harness([B('a')], {implementation: closeIt, review: () => ({text: 'REVIEW_STATUS: CLEAN'}), check: check('WAIT')}, {changed: {lines: 5, files: 3}})
    await runLoop(files.deps, opts({autoReview: true}))
    expect(files.calls.map((c) => c.action)).toEqual(['implementation', 'review', 'check'])
    const zero = harness([B('a')], {implementation: closeIt, review: () => ({text: 'REVIEW_STATUS: CLEAN'}), check: check('WAIT')}, {changed: {lines: 0, files: 0}})
    await runLoop(zero.deps, opts({autoReview: true, reviewThreshold: 0}))
    expect(zero.calls.map((c) => c.action)).toEqual(['implementation', 'review', 'check'])
  })

  it('periodic alignment every N completed cycles; failure stops with exit 1', async () => {
    const h = harness([B('a'), B('b'), B('c')], {implementation: closeIt, check: check('WAIT')})
    await runLoop(h.deps, opts({reviewEvery: 2}))
    expect(h.calls.map((c) => c.action)).toEqual(['implementation', 'implementation', 'alignment', 'implementation', 'check'])
    const f = harness([B('a')], {implementation: closeIt, alignment: () => ({rc: 1})})
    const r = await runLoop(f.deps, opts({reviewEvery: 1}))
    expect(r.exitCode).toBe(1)
    expect(f.both).toContain('helix: periodic alignment failed after 1 cycles')
  })

  it('context refreshed every 5 completed cycles', async () => {
    const h = harness(['a', 'b', 'c', 'd', 'e', 'f'].map((x) => B(x)), {implementation: closeIt, check: check('WAIT')})
    await runLoop(h.deps, opts())
    expect(h.contexts).toHaveLength(2)
  })
})

describe('signals', () => {
  it('SIGTERM during an agent call: unclaims the bead, interrupted, 143, mutex released', async () => {
    const ac = new AbortController()
    const h = harness([B('a'), B('b')], {implementation: () => (ac.abort('SIGTERM'), {rc: 143})})
    const r = await runLoop(h.deps, opts({signal: ac.signal}))
    expect(r.exitCode).toBe(143)
    expect(r.stopReason).toBe('interrupted')
    expect(h.tracker.get('a').status).toBe('open')
    expect(h.tracker.calls).toContain('unclaim a')
    expect(lastState(h).stop_reason).toBe('interrupted')
    expect(h.mutexReleased).toBe(true)
    expect(h.calls).toHaveLength(1)
    expect(h.both.some((l) => l.startsWith('helix: ═══ run complete: 1 attempted, 0 completed'))).toBe(true)
  })

  it('SIGINT → 130', async () => {
    const ac = new AbortController()
    const h = harness([B('a')], {implementation: () => (ac.abort('SIGINT'), {rc: 130})})
    const r = await runLoop(h.deps, opts({signal: ac.signal}))
    expect(r.exitCode).toBe(130)
  })
})

describe('dry run and build', () => {
  it('--dry-run prints the command line and prompt, changes nothing', async () => {
    const h = harness([B('a')], {implementation: closeIt})
    const r = await runLoop(h.deps, opts({dryRun: true}))
    expect(r.exitCode).toBe(0)
    expect(h.stdout.join('')).toContain('/bin/codex implementation')
    expect(h.stdout.join('')).toContain('implementation prompt a')
    expect(h.calls).toEqual([])
    expect(h.tracker.calls).toEqual([])
    expect(h.states).toEqual([])
  })

  it('build: one cycle on the selector match, no drain', async () => {
    const h = harness([B('a', {priority: 0}), B('b', {title: 'Fix The Widget'})], {implementation: closeIt})
    const r = await runLoop(h.deps, opts({once: {selector: 'widget'}}))
    expect(r.exitCode).toBe(0)
    expect(h.calls.map((c) => c.beadId)).toEqual(['b'])
  })

  it('build: failure exits 1; unknown selector exits 1', async () => {
    const h = harness([B('a')], {implementation: () => ({rc: 1})})
    expect((await runLoop(h.deps, opts({once: {}}))).exitCode).toBe(1)
    const g = harness([B('a')], {})
    const r = await runLoop(g.deps, opts({once: {selector: 'nope'}}))
    expect(r.exitCode).toBe(1)
    expect(g.both).toContain("helix: no ready issue matches 'nope'")
  })
})

describe('run-state', () => {
  it('keeps a parallel_run_denied_count bumped by a denied run while this one runs', async () => {
    const h = harness([B('a'), B('b')], {
      implementation: async (c, t) => {
        closeIt(c, t)
        if (c.beadId === 'a') {
          const cur = await h.deps.state.load()
          await h.deps.state.save({...cur!, parallel_run_denied_count: 3})
        }
      },
      check: check('WAIT'),
    })
    await runLoop(h.deps, opts())
    expect(lastState(h).parallel_run_denied_count).toBe(3)
  })

  it('records per-cycle timings, tokens, log path and backoff_until', async () => {
    const h = harness([B('a')], {implementation: (c, t) => (h.calls.length === 1 ? {rc: 1, tokens: 7} : (closeIt(c, t), {tokens: 5})), check: check('WAIT')})
    await runLoop(h.deps, opts())
    const withBackoff = h.states.find((s) => Object.keys(s.backoff_until ?? {}).length > 0)
    expect(withBackoff?.backoff_until?.a).toBe('2026-03-01T10:00:06.000Z')
    const s = lastState(h)
    expect(s.log).toBe('/abs/.helix-logs/helix-20260101-000000.log')
    expect(s.total_tokens).toBe(22)
    expect(s.cycles).toMatchObject([{n: 1, bead: 'a', outcome: 'FAILED', tokens: 7, rc: 1, duration_ms: 1000}, {n: 2, bead: 'a', outcome: 'COMPLETE', tokens: 5, rc: 0}])
    expect(s.backoff_until).toEqual({})
  })
})

describe('build edge cases', () => {
  it('claim conflict → exit 3; empty queue → exit 0; a failed attempt says so', async () => {
    const h = harness([B('a')], {})
    h.tracker.claimConflicts.add('a')
    expect((await runLoop(h.deps, opts({once: {selector: 'a'}}))).exitCode).toBe(3)
    const e = harness([], {})
    const r = await runLoop(e.deps, opts({once: {}}))
    expect(r.exitCode).toBe(0)
    expect(e.both).toContain('helix: no ready issues')
    const f = harness([B('a')], {implementation: () => ({rc: 1})})
    await runLoop(f.deps, opts({once: {}}))
    expect(f.both).toContain('helix: build did not complete a')
    expect(f.calls.map((c) => c.action)).toEqual(['implementation'])
  })
})

describe('finished epics are never left open', () => {
  it('max-cycles reached on the last child: the epic is closed before stopping', async () => {
    const h = harness([B('ep', {issue_type: 'epic'}), B('k1', {parent: 'ep'}), B('other', {priority: 4})], {implementation: closeIt})
    const r = await runLoop(h.deps, opts({maxCycles: 1}))
    expect(r.stopReason).toBe('max_cycles')
    expect(h.tracker.get('ep').status).toBe('closed')
    expect(h.normalView()).toContain('helix: epic ep complete — closing')
  })

  it('build of the last open child closes its epic; an epic with open children stays open', async () => {
    const h = harness([B('ep', {issue_type: 'epic'}), B('k1', {parent: 'ep'}), B('k2', {parent: 'ep', status: 'closed'})], {implementation: closeIt})
    expect((await runLoop(h.deps, opts({once: {selector: 'k1'}}))).exitCode).toBe(0)
    expect(h.tracker.get('ep').status).toBe('closed')
    const g = harness([B('ep', {issue_type: 'epic'}), B('k1', {parent: 'ep'}), B('k2', {parent: 'ep'})], {implementation: closeIt})
    await runLoop(g.deps, opts({once: {selector: 'k1'}}))
    expect(g.tracker.get('ep').status).toBe('open')
  })
})
