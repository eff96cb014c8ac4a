// The test fixtures themselves: temp dirs and processes are gone after their test,
// and the stale-dist guard refuses an old build.
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {checkDist} from './dist-guard.js'
import {makeTempDir, tempDir, trackProcess} from './tmp.js'

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
