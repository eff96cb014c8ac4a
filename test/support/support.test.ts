// The test fixtures themselves: temp dirs and processes are gone after their test,
// and the stale-dist guard refuses an old build.
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {cpuSeconds} from './cpu-log.js'
import {checkDist} from './dist-guard.js'
import {makeTempDir, tempDir, trackProcess} from './tmp.js'
import {waitFor} from './wait.js'
import {barrier, EventLog, latch, settled} from './latch.js'
import {testEnv} from './env.js'

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('makeTempDir / trackProcess', () => {
  const made: {dir?: string; pid?: number} = {}
  it('creates a real directory and a tracked process', () => {
    made.dir = makeTempDir('helix-support-')
    writeFileSync(path.join(made.dir, 'f'), 'x')
    const child = trackProcess(spawn('sleep', ['60'], {stdio: 'ignore'}))
    made.pid = child.pid
    expect(existsSync(made.dir)).toBe(true)
    expect(alive(made.pid!)).toBe(true)
  })
  it('both are gone once that test ended', async () => {
    expect(existsSync(made.dir!)).toBe(false)
    // killed with SIGKILL; the exit is reaped asynchronously
    const deadline = Date.now() + 5000
    while (alive(made.pid!) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(alive(made.pid!)).toBe(false)
  })
  it('`using` removes the directory at the end of the block', () => {
    let p: string
    {
      using d = tempDir('helix-support-')
      p = d.path
      expect(existsSync(p)).toBe(true)
    }
    expect(existsSync(p)).toBe(false)
  })
})

describe('stale dist guard', () => {
  function layout(srcMtime: number, distMtime?: number): string {
    const repo = makeTempDir('helix-guard-')
    mkdirSync(path.join(repo, 'src', 'a'), {recursive: true})
    writeFileSync(path.join(repo, 'src', 'a', 'x.ts'), '')
    utimesSync(path.join(repo, 'src', 'a', 'x.ts'), srcMtime, srcMtime)
    if (distMtime !== undefined) {
      mkdirSync(path.join(repo, 'dist', 'a'), {recursive: true})
      writeFileSync(path.join(repo, 'dist', 'a', 'x.js'), '')
      utimesSync(path.join(repo, 'dist', 'a', 'x.js'), distMtime, distMtime)
    }
    return repo
  }
  it('passes on a build newer than every source file', () => {
    expect(() => checkDist(layout(1000, 2000))).not.toThrow()
  })
  it('fails loudly when a source file is newer than the build', () => {
    expect(() => checkDist(layout(3000, 2000))).toThrow(/dist\/ is stale \(src\/a\/x\.ts is newer than the last build\): run npm run build/)
  })
  it('fails loudly when there is no build', () => {
    expect(() => checkDist(layout(1000))).toThrow(/dist\/ is missing: run npm run build/)
  })
})

describe('the rig: waitFor, latches, the env scrubber', () => {
  it('waitFor returns how long it took, and throws naming what it waited for', async () => {
    let n = 0
    expect(await waitFor(() => ++n >= 3, {intervalMs: 1})).toBeGreaterThanOrEqual(0)
    expect(n).toBe(3)
    await expect(waitFor(() => false, {timeoutMs: 30, what: 'godot'})).rejects.toThrow(/timed out after 30 ms waiting for godot/)
  })

  it('a barrier holds every party until the last arrives; a latch opens once for every waiter', async () => {
    const order: string[] = []
    const together = barrier(2)
    const first = together().then(() => order.push('first'))
    await settled()
    expect(order).toEqual([])
    await Promise.all([first, together().then(() => order.push('second'))])
    expect(order.sort()).toEqual(['first', 'second'])
    const l = latch()
    const waits = [l.wait(), l.wait()]
    l.open()
    await Promise.all(waits)
    expect(l.isOpen).toBe(true)
    const ev = new EventLog()
    const seen = ev.seen('landed a')
    ev.push('landed b')
    let done = false
    void seen.then(() => (done = true))
    await settled()
    expect(done).toBe(false)
    ev.push('landed a')
    await seen
  })

  it("the env scrubber drops the runner's HELIX_*/DDX_*/GIT_DIR, keeps what the test sets", () => {
    const saved = {...process.env}
    try {
      Object.assign(process.env, {HELIX_CLAIM_TOKEN: 'leak', DDX_BEAD_DIR: '/leak', GIT_DIR: '/leak/.git', HELIX_KILL_GRACE_MS: '10000'})
      const e = testEnv({HELIX_OWNER: 'me'})
      expect(e.HELIX_CLAIM_TOKEN).toBeUndefined()
      expect(e.DDX_BEAD_DIR).toBeUndefined()
      expect(e.GIT_DIR).toBeUndefined()
      expect(e).toMatchObject({HELIX_OWNER: 'me', NODE_ENV: 'production', HELIX_KILL_GRACE_MS: '500', PATH: process.env.PATH})
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
      Object.assign(process.env, saved)
    }
  })
})

describe('the CPU log (HELIX_TEST_CPU_LOG)', () => {
  it("counts this worker's time and the time of the children it reaped", () => {
    const before = cpuSeconds()
    expect(before).toBeGreaterThan(0)
    // a child that burns 0.3 s of its own CPU, however loaded the machine is
    const r = spawnSync(process.execPath, ['-e', 'while (process.cpuUsage().user < 300_000) Math.sqrt(Math.random())'], {stdio: 'ignore', env: testEnv()})
    expect(r.status).toBe(0)
    expect(cpuSeconds()! - before!).toBeGreaterThanOrEqual(0.3)
  })
})
