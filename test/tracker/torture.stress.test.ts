/**
 * SPEC 13.1 torture (issue 9): 20 trials of a writer SIGSTOPped between its
 * temp write and its rename while another writer breaks its (aged) lock and
 * updates the tracker. 0 lost updates; every exit-0 change is in the file.
 * Needs `npm run build`. About 1 s a trial on 2 cores.
 */
import {describe, expect, it} from 'vitest'
import {tortureTrials} from './torture.js'

describe('SIGSTOP before rename, 20 trials on a 502-bead tracker', () => {
  it('0 lost updates', async () => {
    const t0 = Date.now()
    const r = await tortureTrials(20)
    process.stderr.write(`torture: 20 trials, ${r.exitZero} exit-0 updates, ${r.lost} lost, ${Date.now() - t0} ms\n`)
    expect(r).toEqual({lost: 0, exitZero: 40})
  }, 180_000)
})
