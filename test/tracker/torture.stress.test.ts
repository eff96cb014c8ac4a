/**
 * SPEC 13.1 torture (issue 9): 20 trials of a writer SIGSTOPped between its
 * temp write and its rename while another writer breaks its (aged) lock and
 * updates the tracker. 0 lost updates; every exit-0 change is in the file.
 * Needs `npm run build`. About 1 s a trial on a quiet 2-core machine; the timeout leaves room for a loaded one.
 */
import {describe, expect, it} from 'vitest'
import {trials} from '../support/stress.js'
import {tortureTrials} from './torture.js'

// 20 trials under `npm run test:stress`, a 2-trial smoke in `npm test` (each trial drives the whole path)
const TRIALS = trials(20, 2)

describe(`SIGSTOP before rename, ${TRIALS} trials on a 502-bead tracker`, () => {
  it('0 lost updates', async () => {
    const t0 = Date.now()
    const r = await tortureTrials(TRIALS)
    process.stderr.write(`torture: ${TRIALS} trials, ${r.exitZero} exit-0 updates, ${r.lost} lost, ${Date.now() - t0} ms\n`)
    expect(r).toEqual({lost: 0, exitZero: 2 * TRIALS})
  }, 600_000)
})
