// SPEC 19.3 end to end: `helix tracker init` registers the merge driver, and a real
// `git merge` of two branches that both changed the tracker (the same bead's notes
// included, which a line merge cannot do) goes through `helix tracker merge` cleanly.
// `helix` is on PATH as a one-line shim, as it is for someone who installed it.
// The branches' tracker edits go through the tracker library in this process (the
// code behind `helix tracker create/update/close`), and `tracker init` runs in-process
// (issue 30), to keep the processes spawned down to what is under test: git running the
// driver through the shim. `tracker init` in a project that already has a tracker:
// merge-init.test.ts.
import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync, chmodSync, mkdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {BIN} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'
import {helixInProcess} from '../support/in-process.js'
import {closeBead, createBead, updateBead} from '../../src/tracker/ops.js'
import {projectPaths} from '../../src/util/root.js'
import {parseTracker} from '../../src/tracker/codec.js'

const SLOW = 180_000

interface Repo {
  dir: string
  env: NodeJS.ProcessEnv
}

function repo(): Repo {
  const base = makeTempDir('helix-merge-')
  const dir = path.join(base, 'repo')
  const bin = path.join(base, 'bin')
  mkdirSync(dir)
  mkdirSync(bin)
  writeFileSync(path.join(bin, 'helix'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`)
  chmodSync(path.join(bin, 'helix'), 0o755)
  const env: NodeJS.ProcessEnv = {...process.env, PATH: `${bin}:${process.env.PATH}`, HOME: base, GIT_CONFIG_NOSYSTEM: '1', NODE_ENV: 'production'}
  for (const k of Object.keys(env)) if ((k.startsWith('HELIX_') || k.startsWith('GIT_') || k.startsWith('DDX_')) && k !== 'GIT_CONFIG_NOSYSTEM') delete env[k]
  Object.assign(env, {GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t'})
  const r = {dir, env}
  git(r, 'init', '-q', '-b', 'main')
  return r
}

function run(r: Repo, cmd: string, args: string[]) {
  const p = spawnSync(cmd, args, {cwd: r.dir, env: r.env, encoding: 'utf8', timeout: 60_000})
  return {code: p.status, stdout: p.stdout, stderr: p.stderr}
}
const git = (r: Repo, ...args: string[]) => run(r, 'git', args)
/** `helix tracker init` in this process, with the repository's HOME, PATH (the shim first) and no system git config */
const trackerInit = (r: Repo) => helixInProcess(r.dir, ['tracker', 'init'], {HOME: r.env.HOME, PATH: r.env.PATH, GIT_CONFIG_NOSYSTEM: '1'})
const tracker = (r: Repo) => path.join(r.dir, '.ddx', 'beads.jsonl')
const beads = (r: Repo) => new Map(readFileSync(tracker(r), 'utf8').split('\n').filter(Boolean).map((l) => [JSON.parse(l).id as string, JSON.parse(l) as Record<string, unknown>]))

function commitAll(r: Repo, msg: string): void {
  expect(git(r, 'add', '-A').code).toBe(0)
  expect(git(r, 'commit', '-q', '-m', msg).code).toBe(0)
}

const paths = (r: Repo) => projectPaths(r.dir, {})
const create = async (r: Repo, title: string) => (await createBead(paths(r), {title, hook: false}, {})).id

describe('tracker merge driver through git (built CLI)', () => {
  it('two branches that both changed the tracker, one bead on both sides, merge cleanly', async () => {
    const r = repo()
    const init = await trackerInit(r)
    expect(init.code).toBe(0)
    expect(init.stdout).toContain("registered the tracker merge driver: .gitattributes, merge.helix-beads.driver, merge.helix-beads.name (runs 'helix tracker merge %O %A %B')")
    expect(init.stderr).toBe('')
    expect(readFileSync(path.join(r.dir, '.gitattributes'), 'utf8')).toBe('.ddx/beads.jsonl merge=helix-beads\n')
    expect(git(r, 'config', '--get', 'merge.helix-beads.driver').stdout).toBe('helix tracker merge %O %A %B\n')
    const a = await create(r, 'shared bead')
    const b = await create(r, 'closed on feature')
    const c = await create(r, 'untouched')
    commitAll(r, 'tracker')
    const untouched = readFileSync(tracker(r), 'utf8').split('\n').find((l) => l.includes(`"${c}"`))!

    expect(git(r, 'switch', '-q', '-c', 'feature').code).toBe(0)
    await updateBead(paths(r), a, {appendNotes: 'from feature', addLabels: ['feat']})
    await closeBead(paths(r), b)
    const f = await create(r, 'new on feature')
    commitAll(r, 'feature work')

    expect(git(r, 'switch', '-q', 'main').code).toBe(0)
    await updateBead(paths(r), a, {appendNotes: 'from main', addLabels: ['main']})
    await updateBead(paths(r), b, {priority: 0})
    const m = await create(r, 'new on main')
    commitAll(r, 'main work')

    const merge = git(r, 'merge', '--no-edit', 'feature')
    expect(merge.code, merge.stdout + merge.stderr).toBe(0)
    expect(merge.stdout + merge.stderr).not.toMatch(/CONFLICT/)
    expect(git(r, 'status', '--porcelain').stdout).toBe('')
    const t = beads(r)
    expect(t.get(a)!.notes).toBe('from main\n\nfrom feature')
    expect(t.get(a)!.labels).toEqual(['main', 'feat'])
    expect(t.get(b)).toMatchObject({status: 'closed', priority: 0})
    expect([...t.keys()].sort()).toEqual([a, b, c, f, m].sort())
    expect(readFileSync(tracker(r), 'utf8').split('\n')).toContain(untouched)
    expect(parseTracker(readFileSync(tracker(r)), 'merged').duplicateIds).toEqual([])
  }, SLOW)

  it('a side that is not a valid tracker: the driver fails, git reports a conflict, nothing is guessed', async () => {
    const r = repo()
    expect((await trackerInit(r)).code).toBe(0)
    const a = await create(r, 'one')
    commitAll(r, 'tracker')
    expect(git(r, 'switch', '-q', '-c', 'broken').code).toBe(0)
    writeFileSync(tracker(r), readFileSync(tracker(r), 'utf8') + 'not json\n')
    commitAll(r, 'broken tracker')
    expect(git(r, 'switch', '-q', 'main').code).toBe(0)
    await updateBead(paths(r), a, {priority: 0})
    commitAll(r, 'main')
    const merge = git(r, 'merge', '--no-edit', 'broken')
    expect(merge.code).not.toBe(0)
    expect(merge.stdout).toMatch(/CONFLICT \(content\): Merge conflict in \.ddx\/beads\.jsonl/)
    expect(merge.stderr).toContain('helix: tracker merge: theirs:2: malformed bead (invalid JSON')
    expect(git(r, 'merge', '--abort').code).toBe(0)
  }, SLOW)

  // issue 30: an unknown `__proto__` field was dropped, and notes made a list on one
  // side lost the other side's paragraph, both with exit 0; a CRLF side changed ours' lines.
  it("through git: __proto__ kept, ours' line endings kept; notes both changed in shapes no rule merges: a conflict", async () => {
    const r = repo()
    expect((await trackerInit(r)).code).toBe(0)
    const a = await create(r, 'proto')
    const b = await create(r, 'notes')
    await updateBead(paths(r), b, {appendNotes: 'first'})
    const lines = readFileSync(tracker(r), 'utf8').split('\n')
    const ia = lines.findIndex((l) => l.includes(`"${a}"`))
    lines[ia] = lines[ia].replace(/}$/, ',"__proto__":{"polluted":true}}')
    writeFileSync(tracker(r), lines.join('\n'))
    commitAll(r, 'tracker')

    expect(git(r, 'switch', '-q', '-c', 'feature').code).toBe(0)
    await updateBead(paths(r), a, {title: 'renamed on feature'})
    // feature's tracker written with CRLF line endings (an editor on another system)
    writeFileSync(tracker(r), readFileSync(tracker(r), 'utf8').replace(/\n/g, '\r\n'))
    commitAll(r, 'feature')
    expect(git(r, 'switch', '-q', 'main').code).toBe(0)
    await updateBead(paths(r), a, {priority: 0})
    commitAll(r, 'main')
    const merge = git(r, 'merge', '--no-edit', 'feature')
    expect(merge.code, merge.stdout + merge.stderr).toBe(0)
    const text = readFileSync(tracker(r), 'utf8')
    expect(text).not.toContain('\r')
    const line = text.split('\n').find((l) => l.includes(`"${a}"`))!
    expect(line).toContain('"__proto__":{"polluted":true}')
    expect(JSON.parse(line)).toMatchObject({title: 'renamed on feature', priority: 0})

    expect(git(r, 'switch', '-q', '-c', 'listy').code).toBe(0)
    writeFileSync(tracker(r), text.replace(/"notes":"first"/, '"notes":["first","as a list"]'))
    commitAll(r, 'notes as a list')
    expect(git(r, 'switch', '-q', 'main').code).toBe(0)
    await updateBead(paths(r), b, {appendNotes: 'a paragraph'})
    commitAll(r, 'append')
    const conflict = git(r, 'merge', '--no-edit', 'listy')
    expect(conflict.code).not.toBe(0)
    expect(conflict.stdout).toMatch(/CONFLICT \(content\): Merge conflict in \.ddx\/beads\.jsonl/)
    expect(conflict.stderr).toContain(`helix: bead ${b}: both sides changed notes and one side is not text`)
    expect(git(r, 'merge', '--abort').code).toBe(0)
  }, SLOW)
})
