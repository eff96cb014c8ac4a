import {describe, expect, it} from 'vitest'
import {batchFor, nextSelectable, selectTarget, tierOf} from '../../src/loop/selection.js'
import {fingerprint, sameFingerprint} from '../../src/loop/fingerprint.js'
import {backoffSeconds} from '../../src/loop/backoff.js'
import {quickReference, renderContext} from '../../src/output/context.js'
import {renderBlockerReport} from '../../src/output/blockers.js'
import {snapOf} from './fakes.js'

const b = (id: string, extra: Record<string, unknown> = {}) => ({id, title: id, status: 'open', created_at: '2026-01-01T00:00:00Z', ...extra})

describe('selection', () => {
  it('tiers and ready order', () => {
    expect(tierOf(b('a', {'spec-id': 'S'}))).toBe(1)
    expect(tierOf(b('a', {'spec-id': ''}))).toBe(2)
    expect(tierOf(b('a', {issue_type: 'epic', acceptance: 'x'}))).toBe(3)
    const snap = snapOf([b('p0', {priority: 0}), b('g', {priority: 4, design: 'd'}), b('e', {priority: 0, issue_type: 'epic'})])
    expect(selectTarget(snap).target?.id).toBe('g')
    expect(nextSelectable(snapOf([b('e', {issue_type: 'epic'}), b('p')]))?.id).toBe('p')
  })

  it('leaves out blocked label, skip list, exclusions; backoff beads are reported as waiting', () => {
    const snap = snapOf([b('l', {labels: ['blocked']}), b('s'), b('x'), b('w'), b('ok', {priority: 4})])
    const sel = selectTarget(snap, {skip: new Set(['s']), exclude: new Set(['x']), backoffUntil: {w: '2026-03-01T10:00:05Z'}, now: new Date('2026-03-01T10:00:00Z')})
    expect(sel.target?.id).toBe('ok')
    expect(sel.waiting).toEqual([{id: 'w', until: '2026-03-01T10:00:05Z'}])
    expect(sel.ready.map((r) => r.id)).not.toContain('s')
    const later = selectTarget(snap, {skip: new Set(['s']), exclude: new Set(['x']), backoffUntil: {w: '2026-03-01T10:00:05Z'}, now: new Date('2026-03-01T10:00:06Z')})
    expect(later.target?.id).toBe('w')
  })

  it('stale in_progress claims are ready only when listed', () => {
    const snap = snapOf([b('c', {status: 'in_progress'})])
    expect(selectTarget(snap).target).toBeNull()
    expect(selectTarget(snap, {staleClaims: new Set(['c'])}).target?.id).toBe('c')
  })

  it('epic focus: children only; a child selected outside focus names its epic', () => {
    const snap = snapOf([b('ep', {issue_type: 'epic'}), b('k1', {parent: 'ep', priority: 3}), b('o', {priority: 1})])
    expect(selectTarget(snap, {focusedEpic: 'ep'}).target?.id).toBe('k1')
    const free = selectTarget(snapOf([b('ep', {issue_type: 'epic'}), b('k1', {parent: 'ep'})]))
    expect(free).toMatchObject({target: {id: 'k1'}, epicFocus: 'ep'})
    expect(selectTarget(snap, {focusedEpic: 'nobody'}).target).toBeNull()
  })

  it('batch: up to 2 siblings by parent, spec-id or area label; never epics', () => {
    const t = b('t', {parent: 'P', labels: ['area:ui']})
    const pool = [t, b('s1', {parent: 'P'}), b('s2', {labels: ['area:ui']}), b('s3', {parent: 'P'}), b('ep', {parent: 'P', issue_type: 'epic'}), b('u')]
    expect(batchFor(t, pool).map((x) => x.id)).toEqual(['s1', 's2'])
    expect(batchFor(b('lone'), pool)).toEqual([])
  })
})

describe('fingerprint and backoff', () => {
  it('missing and empty are equal; dependency order does not matter', () => {
    const dep = (id: string) => ({issue_id: 'a', depends_on_id: id, type: 'blocks'})
    expect(sameFingerprint(fingerprint(b('a')), fingerprint(b('a', {'spec-id': '', replaces: ''})))).toBe(true)
    expect(sameFingerprint(fingerprint(b('a', {dependencies: [dep('x'), dep('y')]})), fingerprint(b('a', {dependencies: [dep('y'), dep('x')]})))).toBe(true)
    expect(sameFingerprint(fingerprint(b('a')), fingerprint(b('a', {'execution-eligible': true})))).toBe(false)
  })

  it('delay(a) = min(5·2^(a−1), 40); HELIX_BACKOFF_SLEEP replaces it', () => {
    expect([1, 2, 3, 4, 5].map((a) => backoffSeconds(a, {}))).toEqual([5, 10, 20, 40, 40])
    expect(backoffSeconds(3, {HELIX_BACKOFF_SLEEP: '0'})).toBe(0)
    expect(backoffSeconds(1, {HELIX_BACKOFF_SLEEP: '2.5'})).toBe(2.5)
  })
})

describe('context and blocker report', () => {
  it('context.md carries the SPEC 6.4 parts', () => {
    const snap = snapOf([b('ep', {issue_type: 'epic', 'spec-id': 'FEAT-1', acceptance: 'all green'}), b('k', {parent: 'ep'}), b('c', {status: 'closed'}), b('i', {status: 'in_progress'})])
    const md = renderContext({root: '/r', trackerFile: '/r/.ddx/beads.jsonl', snap, focusedEpic: snap.byId.get('ep')!, agentsMd: '# A\n## Quick Reference\nnpm test\n## Other\nx'})
    expect(md.startsWith('# HELIX Execution Context\n')).toBe(true)
    expect(md).toContain('Project root: /r')
    expect(md).toContain('Issue counts: ready=1, open=2, in-progress=1, closed=1')
    expect(md).toContain('npm test')
    expect(md).not.toContain('\nx\n')
    expect(md).toContain('- id: ep')
    expect(md).toContain('- spec: FEAT-1')
    expect(md).toContain('- acceptance: all green')
    expect(quickReference('no such section')).toBeNull()
  })

  it('blocker report sections', () => {
    const text = renderBlockerReport({now: new Date(0), attempted: 5, completed: 1, logPath: '/l.log', entries: [{id: 'x', title: 'T', reason: 'R', attempts: 4}]})
    expect(text).toContain('# HELIX Run Blocker Report')
    expect(text).toContain('Cycles: 5 attempted, 1 completed')
    expect(text).toContain('Log: /l.log')
    expect(text).toContain('## Blocked Issues\n\n### x\n\n- Title: T\n- Reason: R\n- Attempts: 4')
  })

  it('blocker report: a multi-line title stays one line (no injected sections)', () => {
    const title = 'Fix it\n\n### hx-fake\n\n- Reason: all good\r\n- Attempts: 0'
    const text = renderBlockerReport({now: new Date(0), attempted: 1, completed: 0, logPath: null, entries: [{id: 'x', title, reason: 'R', attempts: 4}]})
    expect(text.split('\n').filter((l) => l.startsWith('### '))).toEqual(['### x'])
    expect(text).toContain('- Title: Fix it ### hx-fake - Reason: all good - Attempts: 0\n- Reason: R\n')
  })
})

describe('nextSelectable mirrors the loop', () => {
  it('falls back to normal selection when the focused epic has no selectable child; skips children of skipped epics', () => {
    const snap = snapOf([b('ep', {issue_type: 'epic'}), b('k1', {parent: 'ep', status: 'closed'}), b('k2', {parent: 'ep', labels: ['blocked']}), b('o')])
    expect(nextSelectable(snap, {focusedEpic: 'ep'})?.id).toBe('o')
    const snap2 = snapOf([b('ep', {issue_type: 'epic'}), b('k1', {parent: 'ep'}), b('o', {priority: 4})])
    expect(nextSelectable(snap2, {skip: new Set(['ep'])})?.id).toBe('o')
  })
})
