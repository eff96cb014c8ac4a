// Session 34 (tracker under fire): tracker writers beside git in the same checkout.
// Two lanes of `helix tracker create` run while git commits the tracker over and over
// (`git commit -am`, `git add -A && git commit`). git only reads the file there, so
// every create that exited 0 must be in the file, every line must parse, no id twice,
// and no lock left behind. (`git stash -u && git stash pop` is left out on purpose: git
// resets the file between its read and its write without any lock, so a write that lands
// in between is lost by git, not by helix; docs/decisions.md, session 34.)
// It found no defect, so it runs under `npm run test:stress` only.
import {existsSync, readFileSync} from 'node:fs'
import {spawn} from 'node:child_process'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseTracker} from '../../src/tracker/codec.js'
import {helix, helixAsync, tempProject} from './helpers.js'
import {git, gitEnv} from '../support/git.js'
import {STRESS_FULL} from '../support/stress.js'
import {trackProcess} from '../support/tmp.js'

const itFull = STRESS_FULL ? it : it.skip
const LANES = 2
const CREATES = 40

function gitOnce(cwd: string, script: string): Promise<void> {
  return new Promise((resolve) => {
    const child = trackProcess(spawn('sh', ['-c', script], {cwd, env: gitEnv, stdio: 'ignore'}))
    child.on('close', () => resolve())
  })
}

describe('tracker writers beside git in the same checkout', () => {
  itFull(`${LANES} lanes x ${CREATES} creates while git commits the tracker: none lost, every line valid`, async () => {
    const {root, paths} = tempProject()
    git(root, 'init', '-q', '-b', 'main')
    git(root, 'config', 'user.email', 'test@example.com')
    git(root, 'config', 'user.name', 'test')
    expect(helix(root, ['tracker', 'init']).code).toBe(0)
    expect(helix(root, ['tracker', 'create', 'seed']).code).toBe(0)
    git(root, 'add', '-A')
    git(root, 'commit', '-qm', 'seed')

    let writing = true
    let gitOps = 0
    const gitLoop = (async () => {
      const scripts = ['git commit -qam c', 'git add -A && git commit -qm a']
      while (writing) await gitOnce(root, scripts[gitOps++ % scripts.length])
    })()
    const lane = async (n: number) => {
      const done: Array<{title: string; code: number | null; stderr: string}> = []
      for (let i = 0; i < CREATES; i++) {
        const title = `lane ${n} create ${i}`
        const r = await helixAsync(root, ['tracker', 'create', title])
        done.push({title, code: r.code, stderr: r.stderr})
      }
      return done
    }
    const results = (await Promise.all(Array.from({length: LANES}, (_, n) => lane(n)))).flat()
    writing = false
    await gitLoop

    expect(gitOps).toBeGreaterThan(0)
    expect(results.filter((r) => r.code !== 0)).toEqual([])
    const snap = parseTracker(readFileSync(paths.file), paths.file)
    expect(snap.duplicateIds).toEqual([])
    const titles = new Set(snap.beads.map((b) => b.title))
    expect(results.map((r) => r.title).filter((t) => !titles.has(t))).toEqual([])
    expect(snap.beads).toHaveLength(LANES * CREATES + 1)
    expect(existsSync(path.join(root, '.ddx', 'beads.lock'))).toBe(false)
  }, 600_000)
})
