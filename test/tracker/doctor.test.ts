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

  it('reports each problem with the wording zod 4.6.7 gave it (captured from zod before it was dropped)', () => {
    const cases: Array<[unknown, string[]]> = [
      [{}, ["id: Invalid input: expected string, received undefined"]],
      [{"id": ""}, ["id: Too small: expected string to have >=1 characters"]],
      [{"id": 5}, ["id: Invalid input: expected string, received number"]],
      [{"id": "a", "priority": 1.5}, ["priority: Invalid input: expected int, received number"]],
      [{"id": "a", "priority": -1}, ["priority: Too small: expected number to be >=0"]],
      [{"id": "a", "priority": 7}, ["priority: Too big: expected number to be <=4"]],
      [{"id": "a", "priority": "x"}, ["priority: Invalid input: expected number, received string"]],
      [{"id": "a", "priority": null}, ["priority: Invalid input: expected number, received null"]],
      [{"id": "a", "schema_version": 100000000000000000000}, ["schema_version: Too big: expected int to be <=9007199254740991"]],
      [{"id": "a", "labels": [1, "b", null]}, ["labels.0: Invalid input: expected string, received number", "labels.2: Invalid input: expected string, received null"]],
      [{"id": "a", "labels": "x"}, ["labels: Invalid input: expected array, received string"]],
      [{"id": "a", "claimed-pid": 1.5}, ["claimed-pid: Invalid input"]],
      [{"id": "a", "claimed-pid": null}, ["claimed-pid: Invalid input"]],
      [{"id": "a", "claimed-start": true}, ["claimed-start: Invalid input"]],
      [{"id": "a", "claimed-start": 12.5}, []],
      [{"id": "a", "dependencies": [{"issue_id": 1}]}, ["dependencies.0.issue_id: Invalid input: expected string, received number", "dependencies.0.depends_on_id: Invalid input: expected string, received undefined", "dependencies.0.type: Invalid input: expected string, received undefined"]],
      [{"id": "a", "dependencies": [{"issue_id": "a", "depends_on_id": "", "type": "blocks", "created_at": 3}]}, ["dependencies.0.depends_on_id: Too small: expected string to have >=1 characters", "dependencies.0.created_at: Invalid input: expected string, received number"]],
      [{"id": "a", "execution-eligible": "no"}, ["execution-eligible: Invalid input: expected boolean, received string"]],
      [{"id": "a", "priority": 2, "labels": ["x"], "anything": {"deep": [1]}}, []],
      [null, ['(record): Invalid input: expected object, received null']],
      [[], ['(record): Invalid input: expected object, received array']],
    ]
    for (const [bead, problems] of cases) expect(beadProblems(bead as never), JSON.stringify(bead)).toEqual(problems)
  })
})
