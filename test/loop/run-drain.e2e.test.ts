import {existsSync, readFileSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {beads, calls, helixIn, implOrder, project, runState, writeExecutable} from './e2e-helpers.js'
import {BIN} from '../support/cli.js'

// helix run in the test's own process (src/; the stub agents are real processes), part 1 of 3
// (split for the suite's parallel workers): the drain itself —
// order, batches, failure and backoff, drift, epics. Parts 2 and 3: run-review, run-control.

const NO_REVIEW = ['--no-auto-review']

describe('helix run end to end (in-process, stub agents)', () => {
  it('drains to STOP in priority and dependency order, skipping ineligible beads; --review-every aligns every N completed cycles', async () => {
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
    const r = await helixIn(p, ['run', ...NO_REVIEW, '--codex', '--review-every', '2'])
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

  it('batch mode: siblings sharing a spec-id ride along; only the target decides; every closed bead is counted', async () => {
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
    const r = await helixIn(p, ['run', ...NO_REVIEW])
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

  it('failure → backoff → block → report; a second run leaves the blocked bead alone', async () => {
    const p = project([{id: 'hx-bad', labels: ['keep'], notes: 'original'}, {id: 'hx-ok', priority: 3}], {implementation: {'hx-bad': ['fail'], default: ['close']}, check: ['next:WAIT']})
    const r = await helixIn(p, ['run', ...NO_REVIEW])
    expect(r.code).toBe(0)
    // HELIX_BACKOFF_SLEEP=0: no wait, so the top-priority bead is retried at once
    expect(implOrder(p)).toEqual(['hx-bad', 'hx-bad', 'hx-bad', 'hx-bad', 'hx-ok'])
    expect(r.stderr).toContain('helix: blocking hx-bad after 4 failed attempts')
    expect(r.stderr).toContain('helix: BLOCKERS (1 issue):')
    // SPEC 22.2: every place that names the blocked bead gives the last attempt's reason
    const why = /intractable after 4 attempts with exponential backoff; last: rc=1(: [^\n]+)?/
    expect(r.stderr).toMatch(new RegExp(`helix: {3}hx-bad — ${why.source}\n`))
    const bad = beads(p).get('hx-bad')!
    expect(bad.labels).toEqual(['keep', 'blocked'])
    expect(bad.notes).toMatch(new RegExp(`^original\n\nBLOCKED \\[[^\\]]+\\]: ${why.source}$`))
    expect(bad.status).toBe('open')
    const report = readdirSync(path.join(p.root, '.helix-logs')).find((f) => f.startsWith('blockers-'))!
    const text = readFileSync(path.join(p.root, '.helix-logs', report), 'utf8')
    expect(text).toContain('# HELIX Run Blocker Report')
    expect(text).toContain('## Blocked Issues')
    expect(text).toContain('### hx-bad')
    expect(text).toMatch(new RegExp(`- Reason: ${why.source}`))
    expect((await helixIn(p, ['tracker', 'blocked'])).stdout).toMatch(why)
    expect((await helixIn(p, ['status'])).stdout).toMatch(why)
    expect(runState(p)).toMatchObject({stop_reason: 'blocked', skipped: [{id: 'hx-bad', attempts: 4}]})
    const again = await helixIn(p, ['run', ...NO_REVIEW])
    expect(again.code).toBe(0)
    expect(implOrder(p)).toHaveLength(5)
    expect(beads(p).get('hx-bad')!.notes).toBe(bad.notes)
  })

  // One drift end to end (a dependency added through the real CLI by the agent); each of
  // the 6 fingerprint fields is covered by orchestrator.test.ts's DRIFT cases.
  it('drift (closed → reopened) on a dependency the agent added, and a non-drift edit completes', async () => {
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
      `#!/bin/sh\nif [ "$HELIX_ACTION" = implementation ] && [ "$HELIX_BEAD_ID" = hx-d5 ]; then\n  NODE_ENV=production ${process.execPath} ${BIN} tracker dep add "$HELIX_BEAD_ID" hx-other >/dev/null\nfi\nexec ${path.join(p.binDir, 'codex')} "$@"\n`,
    )
    const r = await helixIn(p, ['run', ...NO_REVIEW, '--agent', path.join(p.binDir, 'depagent')])
    expect(r.code).toBe(0)
    const t = beads(p)
    expect(r.stderr).toContain(`helix: queue drift detected for hx-d5; refusing stale completion`)
    expect(t.get('hx-d5')!.status).toBe('open')
    expect(String(t.get('hx-d5')!.notes)).toContain('queue drift: upstream governance fields changed during execution')
    expect(t.get('hx-d5')!.labels ?? []).not.toContain('blocked')
    expect(t.get('hx-ok')!.status).toBe('closed')
    expect(t.get('hx-ok')!.title).toBe('renamed')
    expect(r.stderr).toContain('helix: BLOCKERS (1 issue):')
    expect(runState(p).completed_cycles).toBe(1)
  })

  it('epic focus with auto-close, and decomposition promoting a bead to an epic', async () => {
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
    const r = await helixIn(p, ['run', ...NO_REVIEW])
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
})
