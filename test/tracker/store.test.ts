import {readFileSync, existsSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {acquireTrackerLock, mutateTracker, readTracker} from '../../src/tracker/store.js'
import {HelixError} from '../../src/util/errors.js'
import {copyReal, REAL_HELIX, sha, tempProject} from './helpers.js'

describe('store', () => {
  it('reads a missing file as an empty tracker', async () => {
    const {paths} = tempProject()
    const snap = await readTracker(paths.file)
    expect(snap.beads).toEqual([])
  })

  it('a no-op rewrite of the real tracker is byte-identical; a one-bead mutation changes one line', async () => {
    const {paths} = copyReal(REAL_HELIX)
    const before = readFileSync(paths.file, 'utf8')
    await mutateTracker(paths, (snap) => ({beads: snap.beads, result: null}))
    expect(readFileSync(paths.file, 'utf8')).toBe(before)
    const id = await mutateTracker(paths, (snap) => {
      const b = snap.beads[10]
      b.title = 'renamed'
      return {beads: snap.beads, result: b.id}
    })
    const a = before.split('\n')
    const c = readFileSync(paths.file, 'utf8').split('\n')
    const changed = c.filter((l, i) => l !== a[i])
    expect(changed).toHaveLength(1)
    expect(JSON.parse(changed[0]).id).toBe(id)
    expect(existsSync(paths.lockDir)).toBe(false)
  })

  it('null beads leaves the file untouched and releases the lock', async () => {
    const {paths} = tempProject('{"id":"b"}\n{"id":"a"}\n')
    const h = sha(paths.file)
    const r = await mutateTracker(paths, () => ({beads: null, result: 42}))
    expect(r).toBe(42)
    expect(sha(paths.file)).toBe(h)
    expect(existsSync(paths.lockDir)).toBe(false)
  })

  it('an error thrown by fn writes nothing and releases the lock', async () => {
    const {paths} = tempProject('{"id":"a"}\n')
    const h = sha(paths.file)
    await expect(
      mutateTracker(paths, () => {
        throw new HelixError('nope', 1)
      }),
    ).rejects.toThrow('nope')
    expect(sha(paths.file)).toBe(h)
    expect(existsSync(paths.lockDir)).toBe(false)
  })

  it('times out with exit 2 while another writer holds the lock', async () => {
    const {paths} = tempProject('{"id":"a"}\n')
    const held = await acquireTrackerLock(paths, 1)
    try {
      const err = await mutateTracker(paths, () => ({beads: [], result: 0}), {timeoutSec: 0.3}).catch((e) => e)
      expect(err).toBeInstanceOf(HelixError)
      expect(err.exitCode).toBe(2)
      expect(err.message).toBe('tracker is locked by another writer (waited 0.3s)')
      expect(readFileSync(paths.file, 'utf8')).toBe('{"id":"a"}\n')
    } finally {
      await held.release()
    }
  })

  it('a malformed tracker refuses mutation and is left unchanged', async () => {
    const {paths} = tempProject('{"id":"a"}\nbroken\n')
    const h = sha(paths.file)
    await expect(mutateTracker(paths, (s) => ({beads: s.beads, result: 0}))).rejects.toThrow(/beads.jsonl:2: malformed bead/)
    expect(sha(paths.file)).toBe(h)
  })
})
