// The reopen that undoes an unlanded attempt's close (SPEC 18.1a) outlasts a lock left by
// a writer that died holding it: an agent killed mid-write while helix was stopping left
// its lock, the run's reopen gave up after the default 10 s just before the lock went
// stale, and the bead stayed closed with no landing until the next run (crash stress, CI).
import {mkdirSync, readFileSync, utimesSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {reopenBead} from '../../src/tracker/ops.js'
import {LOCK_STALE_MS, OUTLAST_STALE_LOCK_SEC} from '../../src/tracker/lock.js'
import {tempProject} from './helpers.js'

/** a lock directory as a dead writer leaves it: last refreshed `ageMs` ago */
function deadWritersLock(lockDir: string, ageMs: number): void {
  mkdirSync(lockDir)
  const t = new Date(Date.now() - ageMs)
  utimesSync(lockDir, t, t)
}

describe('reopening a bead whose attempt did not land', () => {
  it('waits out a dead writer\'s lock when given the outlasting wait; the default-length wait for the same lock gives up', async () => {
    expect(OUTLAST_STALE_LOCK_SEC * 1000).toBeGreaterThan(LOCK_STALE_MS)
    const {paths} = tempProject('{"id":"hx-1","status":"closed"}\n')
    // refreshed 5 s ago: stale 5 s from now
    deadWritersLock(paths.lockDir, LOCK_STALE_MS - 5_000)
    const short = await reopenBead(paths, 'hx-1', 'NOT LANDED', {lockWaitSec: 0.2}).catch((e: Error) => e)
    expect(String(short)).toMatch(/tracker is locked by another writer \(waited 0\.2s\)/)
    expect(readFileSync(paths.file, 'utf8')).toMatch(/"status":"closed"/)

    const b = await reopenBead(paths, 'hx-1', 'NOT LANDED', {lockWaitSec: OUTLAST_STALE_LOCK_SEC})
    expect(b.status).toBe('open')
    expect(readFileSync(paths.file, 'utf8')).toMatch(/"status":"open"/)
  }, 30_000)
})
