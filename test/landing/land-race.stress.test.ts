// Two helix processes landing on one repository at once (the land lock across
// processes, rebase onto a moving base, compare-and-set): every attempt lands,
// history stays linear, nothing is left behind. Uses the built dist/ (npm run build).
import {spawn} from 'node:child_process'
import {existsSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {trials} from '../support/stress.js'
import {branches, g, gitTestEnv, makeRepo, worktrees} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'

const REPO = path.resolve(import.meta.dirname, '..', '..')
const LANDING = path.join(REPO, 'dist', 'landing', 'local.js')
// the smoke: two landings per process, so each process lands once onto a base the other moved
const PER_PROCESS = trials(8, 2)

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

/** a helix-like process landing PER_PROCESS attempts; it fixes its base, says `ready`, and starts on `go` */
function worker(root: string, sync: string, name: string): Promise<{code: number | null; out: string}> {
  const script = `
import {execFileSync} from 'node:child_process'
import {existsSync, writeFileSync} from 'node:fs'
import path from 'node:path'
const {createGitLanding} = await import(${JSON.stringify(LANDING)})
const root = ${JSON.stringify(root)}
const landing = createGitLanding({root, trackerDir: path.join(root, '.ddx'), env: process.env, now: () => new Date()})
await landing.base()
writeFileSync(${JSON.stringify(sync)} + '/ready-${name}', '')
while (!existsSync(${JSON.stringify(sync)} + '/go')) await new Promise((r) => setTimeout(r, 20))
const results = []
for (let i = 0; i < ${PER_PROCESS}; i++) {
  const ws = await landing.prepare('hx-${name}' + i, 1, 1)
  writeFileSync(path.join(ws.dir, '${name}' + i + '.txt'), '${name}' + i + '\\n')
  execFileSync('git', ['add', '-A'], {cwd: ws.dir})
  execFileSync('git', ['-c', 'user.name=a', '-c', 'user.email=a@a', 'commit', '-q', '-m', '${name}' + i], {cwd: ws.dir})
  const r = await landing.land(ws)
  results.push(r.landed ? 'landed' : 'NOT ' + r.reason)
}
console.log(JSON.stringify(results))
`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {cwd: root, env: {...gitTestEnv, NODE_ENV: 'production'}, stdio: ['ignore', 'pipe', 'pipe']})
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (out += d))
  return new Promise((resolve) => child.on('close', (code) => resolve({code, out})))
}

describe('landing from two processes at once', () => {
  it.each([
    ['base checked out in the root (merge --ff-only)', false],
    ['base not checked out (update-ref compare-and-set)', true],
  ])('%s: every attempt lands, linear, nothing left', async (_label, switchRoot) => {
    const root = makeRepo('helix-landrace-')
    const sync = makeTempDir('helix-landrace-sync-')
    dirs.push(root, sync)
    const running = Promise.all([worker(root, sync, 'p'), worker(root, sync, 'q')])
    await waitFor(() => existsSync(path.join(sync, 'ready-p')) && existsSync(path.join(sync, 'ready-q')), {timeoutMs: 30_000, what: 'both workers to get ready'})
    // with the base fixed as main, move the root to another branch: landing must use update-ref
    if (switchRoot) g(root, 'switch', '-q', '-c', 'operator-branch')
    writeFileSync(path.join(sync, 'go'), '')
    const results = await running
    for (const r of results) {
      expect(r.code, r.out).toBe(0)
      expect(JSON.parse(r.out.trim().split('\n').at(-1)!)).toEqual(Array(PER_PROCESS).fill('landed'))
    }
    expect(g(root, 'rev-list', '--count', 'main')).toBe(String(1 + 2 * PER_PROCESS))
    expect(g(root, 'rev-list', '--merges', '--count', 'main')).toBe('0')
    expect(g(root, 'ls-tree', '--name-only', 'main').split('\n').filter((f) => f.endsWith('.txt'))).toHaveLength(2 * PER_PROCESS)
    expect(branches(root)).toEqual([])
    expect(worktrees(root)).toEqual([root])
    if (switchRoot) expect(g(root, 'symbolic-ref', '--short', 'HEAD')).toBe('operator-branch')
  })
})
