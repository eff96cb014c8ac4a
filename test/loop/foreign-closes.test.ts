/**
 * An agent that closes a bead it was not asked to work on (session 35): the close is
 * undone and said, one it removed is named; the attempt's own bead, its batch, its new beads, epics and the
 * beads this run's other workers close are left as they are.
 */
import {describe, expect, it} from 'vitest'
import {runLoop} from '../../src/loop/orchestrator.js'
import {check, closeIt, FakeLanding, harness, lastState, opts} from './fakes.js'

const B = (id: string, extra: Record<string, unknown> = {}) => ({id, title: `title ${id}`, ...extra})

describe('a bead closed during another bead\'s attempt', () => {
  it('is reopened with a note and one line, the attempt still completes, and the bead is attempted on its own later', async () => {
    const h = harness([B('a', {priority: 0}), B('b'), B('c'), B('ep', {issue_type: 'epic'})], {
      implementation: (c, t) => {
        closeIt(c, t)
        if (c.beadId === 'a') {
          t.get('b').status = 'closed'
          t.get('ep').status = 'closed'
          t.beads.push({id: 'a-child', title: 'found while working', status: 'closed', priority: 2, issue_type: 'task', created_at: '2026-01-02T00:00:00Z'})
        }
      },
      check: check('STOP'),
    })
    const r = await runLoop(h.deps, opts())
    expect(r.exitCode).toBe(0)
    expect(h.both).toContain('helix: b was closed during the attempt on a, which was not working on it; reopened (a close needs its own attempt; close by hand if the work is done)')
    expect(h.tracker.calls).toContain('reopen b')
    expect(String(h.tracker.get('b').notes)).toMatch(/^REOPENED \[.+\]: closed during the attempt on a \(cycle 1\), which was not working on it; helix reopened it\. Close it again by hand/)
    // its own attempt closed it afterwards
    expect(h.calls.filter((c) => c.action === 'implementation').map((c) => c.beadId)).toEqual(['a', 'b', 'c'])
    expect(h.tracker.get('b').status).toBe('closed')
    // an epic (helix closes those itself) and a bead the attempt created are not reopened
    expect(h.tracker.calls).not.toContain('reopen ep')
    expect(h.tracker.calls).not.toContain('reopen a-child')
    expect(lastState(h).completed_cycles).toBe(3)
  })

  it('a bead removed from the tracker during the attempt is named in one line', async () => {
    const h = harness([B('a', {priority: 0}), B('b'), B('c'), B('d')], {
      implementation: (c, t) => {
        closeIt(c, t)
        if (c.beadId === 'a') t.beads = t.beads.filter((x) => x.id !== 'c')
      },
      check: check('WAIT'),
    })
    await runLoop(h.deps, opts({maxCycles: 1}))
    expect(h.both).toContain('helix: c disappeared from the tracker during the attempt on a; helix deletes no bead: restore it from git or a backup of .ddx/beads.jsonl')
  })

  it('batch siblings the attempt closed stay closed', async () => {
    const h = harness([B('t', {'spec-id': 'S', priority: 0}), B('s1', {'spec-id': 'S'}), B('u')], {
      implementation: (c, t) => {
        closeIt(c, t)
        if (c.beadId === 't') t.get('s1').status = 'closed'
      },
      check: check('WAIT'),
    })
    await runLoop(h.deps, opts({maxCycles: 1}))
    expect(h.tracker.calls.filter((x) => x.startsWith('reopen'))).toEqual([])
    expect(h.tracker.get('s1').status).toBe('closed')
  })

  it('with workers, a bead another slot claimed and closed meanwhile is not reopened', async () => {
    let release!: () => void
    const gate = new Promise<void>((res) => (release = res))
    const h = harness([B('a', {priority: 0}), B('b', {priority: 1})], {
      implementation: async (c, t) => {
        if (c.beadId === 'a') await gate
        closeIt(c, t)
        if (c.beadId === 'b') release()
      },
      check: check('WAIT'),
    }, {landing: new FakeLanding()})
    const r = await runLoop(h.deps, opts({workers: 2}))
    expect(r.exitCode).toBe(0)
    expect(h.tracker.calls.filter((x) => x.startsWith('reopen'))).toEqual([])
    expect(new Set(lastState(h).closed_beads)).toEqual(new Set(['a', 'b']))
  })
})
