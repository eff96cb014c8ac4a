// SPEC 20.4: a rebase that stops only on the tracker file is merged by helix's own
// tracker merge (19.3) and goes on: no agent, no round. Locally attempts never commit
// the tracker, so this drives the landing's rebase helper directly on a real repository.
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {createLandBase} from '../../src/landing/land-base.js'
import {openRepo} from '../../src/git/repo.js'
import {makeTempDir} from '../support/tmp.js'
import {g, gitTestEnv} from './helpers.js'
import {gitSeq} from '../support/git.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

const bead = (id: string, title: string) => JSON.stringify({id, title, status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z'})
const unused = async (): Promise<never> => {
  throw new Error('not used by rebaseOnto')
}

function rebaser(root: string) {
  return createLandBase({
    root,
    now: () => new Date(),
    git: async () => openRepo(root, gitTestEnv),
    base: unused,
    baseTip: unused,
    wtTop: () => root,
    trackerFile: (f) => f.startsWith('.ddx/'),
    checkedOutAt: unused,
    commitLeftovers: unused,
    abortRebase: unused,
  }).rebaseOnto
}

describe('a tracker-only conflict (SPEC 20.4)', () => {
  it('is merged by the tracker merge and the rebase finishes: no repair asked for', async () => {
    const root = makeTempDir('helix-tracker-conflict-')
    dirs.push(root)
    const file = path.join(root, '.ddx', 'beads.jsonl')
    gitSeq(root, ['init', '-q', '-b', 'main'], ['config', 'user.email', 't@t'], ['config', 'user.name', 't'])
    g(root, 'config', 'core.editor', 'true')
    const write = (text: string) => writeFileSync(file, text)
    mkdirSync(path.dirname(file))
    write(`${bead('hx-1', 'one')}\n${bead('hx-2', 'two')}\n`)
    gitSeq(root, ['add', '-A'], ['commit', '-q', '-m', 'initial'])
    g(root, 'switch', '-q', '-c', 'att')
    write(`${bead('hx-1', 'one, retitled by the attempt')}\n${bead('hx-2', 'two')}\n`)
    g(root, 'commit', '-q', '-am', 'attempt')
    g(root, 'switch', '-q', 'main')
    write(`${bead('hx-1', 'one')}\n${bead('hx-2', 'two, retitled on the base')}\n`)
    g(root, 'commit', '-q', '-am', 'base')
    const onto = g(root, 'rev-parse', 'HEAD')
    g(root, 'switch', '-q', 'att')
    // git's own rebase of these two lines stops on a conflict
    expect(spawnSync('git', ['rebase', '-q', onto], {cwd: root, env: gitTestEnv}).status).not.toBe(0)
    expect(g(root, 'diff', '--name-only', '--diff-filter=U')).toBe('.ddx/beads.jsonl')
    g(root, 'rebase', '--abort')
    const rb = await rebaser(root)(root, onto, true)
    expect(rb).toBeNull()
    expect(g(root, 'merge-base', '--is-ancestor', onto, 'HEAD')).toBe('')
    expect(g(root, 'symbolic-ref', '--short', 'HEAD')).toBe('att')
    const merged = readFileSync(file, 'utf8')
    expect(merged).not.toMatch(/^(<<<<<<< |=======|>>>>>>> )/m)
    expect(merged).toContain('one, retitled by the attempt')
    expect(merged).toContain('two, retitled on the base')
  })
})
