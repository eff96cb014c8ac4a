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

describe('DDx lock directory interop', () => {
  async function ddxLock(paths: {lockDir: string}, pid: number, ageMs: number) {
    const {mkdirSync, writeFileSync, utimesSync} = await import('node:fs')
    const path = await import('node:path')
    mkdirSync(paths.lockDir)
    writeFileSync(path.join(paths.lockDir, 'pid'), `${pid}\n`)
    const old = new Date(Date.now() - ageMs)
    // a real writer took the lock after it started: acquired_at is after the pid's start
    const {processStartMs} = await import('../../src/proc/pid-identity.js')
    const started = processStartMs(pid)
    writeFileSync(path.join(paths.lockDir, 'acquired_at'), new Date(started === null ? old.getTime() : started + 1000).toISOString() + '\n')
    utimesSync(paths.lockDir, old, old)
  }

  it('an old DDx lock whose writer is alive is never broken: writers wait and time out with exit 2', async () => {
    const path = await import('node:path')
    const {paths} = tempProject('{"id":"a"}\n')
    await ddxLock(paths, process.pid, 60_000) // this test process stands in for a live ddx writer
    const err = await mutateTracker(paths, () => ({beads: [], result: 0}), {timeoutSec: 0.5}).catch((e) => e)
    expect(err).toBeInstanceOf(HelixError)
    expect([err.exitCode, err.message]).toEqual([2, 'tracker is locked by another writer (waited 0.5s)'])
    expect(readFileSync(paths.file, 'utf8')).toBe('{"id":"a"}\n')
    expect(existsSync(path.join(paths.lockDir, 'pid'))).toBe(true)
  })

  it('a DDx lock left by a dead writer is reported by doctor, then broken by the next writer', async () => {
    const {readdirSync} = await import('node:fs')
    const path = await import('node:path')
    const {paths} = tempProject('{"id":"a"}\n')
    await ddxLock(paths, 999_999_999, 60_000)
    const {doctorTracker} = await import('../../src/tracker/admin.js')
    const {fakeProbe} = await import('./helpers.js')
    const r = await doctorTracker(paths, {probe: fakeProbe(), thresholdSec: 7200})
    expect(r.stale_lock).toMatchObject({path: paths.lockDir, ddx_pid: 999_999_999})
    expect(r.ok).toBe(false)
    await mutateTracker(paths, (s) => ({beads: [...s.beads, {id: 'b'}], result: 0}), {timeoutSec: 2})
    expect(readFileSync(paths.file, 'utf8')).toBe('{"id":"a"}\n{"id":"b"}\n')
    expect(existsSync(paths.lockDir)).toBe(false)
    expect(readdirSync(path.dirname(paths.lockDir)).filter((f) => f.includes('beads.lock'))).toEqual([])
  })

  it('a fresh DDx lock (inside the stale window) is not broken even if its pid is dead', async () => {
    const {paths} = tempProject('{"id":"a"}\n')
    await ddxLock(paths, 999_999_999, 0)
    const err = await mutateTracker(paths, () => ({beads: [], result: 0}), {timeoutSec: 0.3}).catch((e) => e)
    expect(err).toBeInstanceOf(HelixError)
    expect(err.exitCode).toBe(2)
    expect(existsSync(paths.lockDir)).toBe(true)
  })
})

describe('atomic write details', () => {
  it('keeps the tracker file mode and leaves no temp files', async () => {
    const {chmodSync, statSync, readdirSync} = await import('node:fs')
    const {paths} = tempProject('{"id":"a"}\n')
    chmodSync(paths.file, 0o600)
    await mutateTracker(paths, (s) => ({beads: [...s.beads, {id: 'b'}], result: 0}))
    expect(statSync(paths.file).mode & 0o777).toBe(0o600)
    expect(readdirSync(paths.dir).sort()).toEqual(['beads.jsonl'])
  })
})

describe('duplicate ids on a mutation', () => {
  it('keeps the last copy and saves the earlier copies verbatim, with a warning', async () => {
    const {readdirSync} = await import('node:fs')
    const path = await import('node:path')
    const {paths} = tempProject('{"id":"a","title":"first"}\n{"id":"b"}\n{"id":"a", "title":"second"}\n')
    const warnings: string[] = []
    await mutateTracker(paths, (s) => ({beads: s.beads, result: 0}), {onWarning: (l) => warnings.push(l)})
    // the kept line is unchanged: written back byte for byte (SPEC 13.2)
    expect(readFileSync(paths.file, 'utf8')).toBe('{"id":"a", "title":"second"}\n{"id":"b"}\n')
    const rejected = readdirSync(paths.dir).filter((f) => f.startsWith('beads.jsonl.rejected-'))
    expect(rejected).toHaveLength(1)
    expect(readFileSync(path.join(paths.dir, rejected[0]), 'utf8')).toBe('{"id":"a","title":"first"}\n')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/^helix: warning: duplicate id\(s\) a: kept the last line of each; saved 1 earlier line\(s\) to .*beads\.jsonl\.rejected-\d{8}T\d{6}Z$/)
  })
})
