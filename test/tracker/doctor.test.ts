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
    expect(await beadProblems({id: 'a', priority: 7, labels: 'x' as unknown as string[], 'execution-eligible': 'no', anything: {deep: [1]}})).toEqual([
      expect.stringMatching(/^priority: /),
      expect.stringMatching(/^labels: /),
      expect.stringMatching(/^execution-eligible: /),
    ])
    expect(await beadProblems({id: 'a', 'claimed-pid': '123', 'x.y': null})).toEqual([])
  })
})
