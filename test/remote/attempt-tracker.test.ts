// With --remote (and --land pr) an attempt's tracker edits are carried onto the fresh
// base bead by bead (SPEC 19.2). A close of another bead that was open at the
// attempt's base is not carried (session 35): the bead stays open on the base with
// a note saying why; the agent's own close and its new beads travel as before.
import {describe, expect, it} from 'vitest'
import {applyAttemptEdits, notClosedNote} from '../../src/remote/attempt-tracker.js'
import type {Bead} from '../../src/tracker/types.js'
import {snapOf} from '../loop/fakes.js'

const B = (id: string, extra: Record<string, unknown> = {}): Bead => ({id, title: id, status: 'open', issue_type: 'task', ...extra}) as Bead

describe('applyAttemptEdits with the attempt\'s own bead', () => {
  it('carries the own close and new beads, not the close of another open bead (whose note says so); an epic or a bead closed at the tip is left alone', () => {
    const before = snapOf([B('own'), B('other'), B('ep', {issue_type: 'epic'}), B('done-there')])
    const after = snapOf([B('own', {status: 'closed'}), B('other', {status: 'closed', labels: ['x']}), B('ep', {issue_type: 'epic', status: 'closed'}), B('done-there', {status: 'closed'}), B('child', {status: 'closed'})])
    const tip = snapOf([B('own'), B('other'), B('ep', {issue_type: 'epic'}), B('done-there', {status: 'closed'})])
    const changed = applyAttemptEdits(before, after, tip, {bead: 'own'})
    expect(tip.byId.get('own')!.status).toBe('closed')
    expect(tip.byId.get('other')).toMatchObject({status: 'open', labels: ['x'], notes: notClosedNote('own')})
    expect(tip.byId.get('ep')!.status).toBe('closed')
    expect(tip.byId.get('done-there')!.notes).toBeUndefined()
    expect(tip.byId.get('child')!.status).toBe('closed')
    expect(new Set(changed)).toEqual(new Set(['own', 'other', 'ep', 'child']))
    // carried again (a retry of the landing): the note is not repeated
    applyAttemptEdits(before, after, tip, {bead: 'own'})
    expect(tip.byId.get('other')!.notes).toBe(notClosedNote('own'))
  })
})
