/**
 * Run-state read-modify-writes under a lock (SPEC 13.1), non-blocking reads of
 * run-state and the pid file, and the pid file's start-field rule (issue 9.2).
 * Real temp directories.
 */
import {execFileSync, spawn} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {emptyRunState, readRunState, runStateLockDir, updateRunState, writeRunState} from '../../src/state/run-state.js'
import {acquirePidFile, readPidFile, runHolderAlive} from '../../src/state/pidfile.js'
import {validStartField} from '../../src/proc/pid-identity.js'
import {makeTempDir} from '../support/tmp.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})
function tmp(): string {
  const d = makeTempDir('helix-state-')
  dirs.push(d)
  mkdirSync(path.join(d, '.ddx'))
  return d
}

describe('run-state under a lock', () => {
  it('20 concurrent denied-count bumps: 20', async () => {
    const file = path.join(tmp(), '.ddx', 'run-state.json')
    await Promise.all(Array.from({length: 20}, () => updateRunState(file, (s) => ({...s, parallel_run_denied_count: s.parallel_run_denied_count + 1}))))
    expect((await readRunState(file))!.parallel_run_denied_count).toBe(20)
    expect(readFileSync(file, 'utf8').endsWith('}\n')).toBe(true)
  })

  it('the lock is the directory other processes use: a free one is taken and given back, a held one waited for, a stale one broken', async () => {
    const file = path.join(tmp(), '.ddx', 'run-state.json')
    const lock = runStateLockDir(file)
    await updateRunState(file, (s) => ({...s, parallel_run_denied_count: 1}))
    expect(existsSync(lock)).toBe(false)
    // held by another process (a fresh directory): the update waits until it is gone
    mkdirSync(lock)
    let done = false
    const p = updateRunState(file, (s) => ({...s, parallel_run_denied_count: s.parallel_run_denied_count + 1})).then(() => (done = true))
    await new Promise((r) => setTimeout(r, 150))
    expect(done).toBe(false)
    rmSync(lock, {recursive: true})
    await p
    expect((await readRunState(file))!.parallel_run_denied_count).toBe(2)
    // left by a killed process (mtime older than the 10 s stale window): broken
    mkdirSync(lock)
    const old = new Date(Date.now() - 60_000)
    utimesSync(lock, old, old)
    await updateRunState(file, (s) => ({...s, parallel_run_denied_count: s.parallel_run_denied_count + 1}))
    expect((await readRunState(file))!.parallel_run_denied_count).toBe(3)
    expect(existsSync(lock)).toBe(false)
  })

  it("a run's save never lowers the denied count others bumped meanwhile", async () => {
    const file = path.join(tmp(), '.ddx', 'run-state.json')
    const mine = emptyRunState()
    await writeRunState(file, mine)
    await updateRunState(file, (s) => ({...s, parallel_run_denied_count: 3}))
    mine.phase = 'running'
    await writeRunState(file, mine)
    expect(await readRunState(file)).toMatchObject({phase: 'running', parallel_run_denied_count: 3})
    expect(mine.parallel_run_denied_count).toBe(3)
  })

  it('a FIFO at run-state.json or helix.pid never blocks a reader', async () => {
    const d = tmp()
    const rs = path.join(d, '.ddx', 'run-state.json')
    const pid = path.join(d, '.ddx', 'helix.pid')
    execFileSync('mkfifo', [rs])
    execFileSync('mkfifo', [pid])
    const t0 = Date.now()
    expect(await readRunState(rs)).toBeNull()
    expect(() => readPidFile(pid)).toThrow(`${pid} is not a regular file`)
    expect(Date.now() - t0).toBeLessThan(1000)
  })
})

describe('pid file start field (issue 9.2)', () => {
  it('only an ISO-8601 UTC time not in the future is evidence', () => {
    const now = Date.parse('2026-06-01T12:00:00Z')
    expect(validStartField('2026-06-01T11:00:00.000Z', now)).toBe(true)
    expect(validStartField('2026-06-01T11:00:00Z', now)).toBe(true)
    for (const bad of ['', 'garbage', '1700000000', '2026-06-01 11:00:00', '2099-01-01T00:00:00.000Z']) expect(validStartField(bad, now)).toBe(false)
  })

  it('a live decoy named with a bad start field is no live run, and the mutex replaces its file', async () => {
    const d = tmp()
    const file = path.join(d, '.ddx', 'helix.pid')
    const decoy = spawn('sleep', ['60'], {stdio: 'ignore'})
    try {
      for (const start of ['garbage', '', '2099-01-01T00:00:00.000Z']) {
        writeFileSync(file, `${decoy.pid} ${start}\n`)
        expect(runHolderAlive(readPidFile(file)!)).toBe(false)
        const r = acquirePidFile(file, 4242)
        expect(r.ok).toBe(true)
        expect(readPidFile(file)!.pid).toBe(4242)
        rmSync(file)
      }
      expect(decoy.exitCode).toBeNull()
    } finally {
      decoy.kill('SIGKILL')
    }
  })
})
