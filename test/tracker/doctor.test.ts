import {describe, expect, it} from 'vitest'
import {doctorTracker} from '../../src/tracker/admin.js'
import {beadProblems} from '../../src/tracker/schema.js'
import {copyReal, fakeProbe, REAL_DDX, REAL_HELIX, sha} from './helpers.js'

describe('doctor on the real trackers', () => {
  for (const f of [REAL_HELIX, REAL_DDX]) {
    it(`${f.split('/').pop()}: no malformed lines, duplicates or schema problems; read-only`, async () => {
      const {paths} = copyReal(f)
      const h = sha(paths.file)
      const r = await doctorTracker(paths, {probe: fakeProbe(), thresholdSec: 7200, now: new Date('2026-04-12T00:00:00Z')})
      expect(r.malformed).toEqual([])
      expect(r.duplicates).toEqual([])
      expect(r.invalid_fields).toEqual([])
      expect(r.cycles).toEqual([])
      expect(sha(paths.file)).toBe(h)
    })
  }

  it('the schema flags wrong types of known fields and keeps unknown keys free', async () => {
    expect(beadProblems({id: 'a', priority: 7, labels: 'x' as unknown as string[], 'execution-eligible': 'no', anything: {deep: [1]}})).toEqual([
      expect.stringMatching(/^priority: /),
      expect.stringMatching(/^labels: /),
      expect.stringMatching(/^execution-eligible: /),
    ])
    expect(beadProblems({id: 'a', 'claimed-pid': '123', 'x.y': null})).toEqual([])
  })

  it('reports each problem in our own words: the field, what it must be, what it is (never its text)', () => {
    const cases: Array<[unknown, string[]]> = [
      [{}, ['id: missing; must be a string']],
      [{id: ''}, ['id: must not be empty']],
      [{id: 5}, ['id: must be a string, not the number 5']],
      [{id: 'a', priority: 1.5}, ['priority: must be a whole number, not the number 1.5']],
      [{id: 'a', priority: -1}, ['priority: must be at least 0, not -1']],
      [{id: 'a', priority: 7}, ['priority: must be at most 4, not 7']],
      [{id: 'a', priority: 'x'}, ['priority: must be a whole number, not a string']],
      [{id: 'a', priority: null}, ['priority: must be a whole number, not null']],
      [{id: 'a', schema_version: 1e20}, ['schema_version: must be a whole number, not the number 100000000000000000000']],
      [{id: 'a', labels: [1, 'b', null]}, ['labels.0: must be a string, not the number 1', 'labels.2: must be a string, not null']],
      [{id: 'a', labels: 'x'}, ['labels: must be a list, not a string']],
      [{id: 'a', 'claimed-pid': 1.5}, ['claimed-pid: must be a whole number or a string, not the number 1.5']],
      [{id: 'a', 'claimed-pid': null}, ['claimed-pid: must be a whole number or a string, not null']],
      [{id: 'a', 'claimed-start': true}, ['claimed-start: must be a string or a number, not true']],
      [{id: 'a', 'claimed-start': 12.5}, []],
      [{id: 'a', dependencies: [{issue_id: 1}]}, ['dependencies.0.issue_id: must be a string, not the number 1', 'dependencies.0.depends_on_id: missing; must be a string', 'dependencies.0.type: missing; must be a string']],
      [{id: 'a', dependencies: [{issue_id: 'a', depends_on_id: '', type: 'blocks', created_at: 3}]}, ['dependencies.0.depends_on_id: must not be empty', 'dependencies.0.created_at: must be a string, not the number 3']],
      [{id: 'a', 'execution-eligible': 'no'}, ['execution-eligible: must be true or false, not a string']],
      [{id: 'a', priority: 2, labels: ['x'], anything: {deep: [1]}}, []],
      [null, ['(record): must be a JSON object, not null']],
      [[], ['(record): must be a JSON object, not an array']],
    ]
    for (const [bead, problems] of cases) expect(beadProblems(bead as never), JSON.stringify(bead)).toEqual(problems)
  })
})
