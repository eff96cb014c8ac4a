/**
 * 16.1 only inside a project: each command in-process (test/support/in-process.ts), what
 * it refuses and writes. Through the built CLI (surface-project.e2e.test.ts): the fast
 * path's refusals, help and --version, doctor's exit as a shell sees it.
 */
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {NOT_PROJECT, outside, temp, tree} from './outside.js'

/** every command once, from the git top level or a subdirectory in turn (all of them
 * share findProjectRoot, whose walk up is unit-tested in test/util/root.test.ts) */
async function refusesEach(o: {dir: string; sub: string}, commands: string[][]): Promise<void> {
  for (const [i, args] of commands.entries()) {
    const r = await helix(i % 2 ? o.sub : o.dir, args)
    expect(r.code, `helix ${args.join(' ')}`).toBe(1)
    expect(r.stderr, `helix ${args.join(' ')}`).toBe(NOT_PROJECT)
    expect(r.stdout).toBe('')
  }
}

describe('16.1 only inside a project', () => {
  it('outside a project every run and operator command refuses in one line, exit 1, and writes nothing; an agent is never started', async () => {
    const o = outside()
    await refusesEach(o, [['status'], ['status', '--json'], ['next'], ['run', '--agent', o.agent, '--max-cycles', '1'], ['start', '--agent', o.agent], ['stop'], ['recover'], ['logs'], ['report'], ['unblock', 'hx-1'], ['check', '--agent', o.agent]])
    expect(existsSync(o.marker)).toBe(false)
    expect(tree(o.dir)).toEqual(o.before)
  })

  it('outside a project every tracker command refuses in one line, exit 1, and writes nothing', async () => {
    const o = outside()
    await refusesEach(o, [['tracker', 'create', 'A title'], ['tracker', 'ready'], ['tracker', 'ready', '--json'], ['tracker', 'status'], ['tracker', 'list'], ['tracker', 'blocked'], ['tracker', 'show', 'hx-1'], ['tracker', 'close', 'hx-1']])
    expect(tree(o.dir)).toEqual(o.before)
  })

  it('an explicit DDX_BEAD_DIR is a project', async () => {
    const dir = temp()
    const beads = temp('helix-beads-')
    writeFileSync(path.join(beads, 'beads.jsonl'), JSON.stringify({id: 'hx-1', title: 'One', status: 'open'}) + '\n')
    const r = await helix(dir, ['tracker', 'ready'], {DDX_BEAD_DIR: beads})
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^hx-1 /)
  })

  it('tracker init: .ddx/ at the git top level with the runtime paths in .gitignore, once; git add -A then skips them', async () => {
    const dir = temp()
    spawnSync('git', ['init', '-q'], {cwd: dir})
    writeFileSync(path.join(dir, '.gitignore'), 'node_modules/')
    mkdirSync(path.join(dir, 'pkg'))
    const r = await helix(path.join(dir, 'pkg'), ['tracker', 'init'])
    expect(r.code).toBe(0)
    expect(existsSync(path.join(dir, '.ddx', 'beads.jsonl'))).toBe(true)
    expect(existsSync(path.join(dir, 'pkg', '.ddx'))).toBe(false)
    expect(r.stdout).toContain('added to .gitignore: .helix/ .helix-logs/ .ddx/helix.pid .ddx/run-state.json .ddx/beads.lock/ .ddx/*.tmp*')
    const ignore = readFileSync(path.join(dir, '.gitignore'), 'utf8')
    expect(ignore).toBe('node_modules/\n# helix runtime files\n.helix/\n.helix-logs/\n.ddx/helix.pid\n.ddx/run-state.json\n.ddx/beads.lock/\n.ddx/*.tmp*\n')
    // idempotent
    const again = await helix(dir, ['tracker', 'init'])
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/^already initialized/)
    expect(readFileSync(path.join(dir, '.gitignore'), 'utf8')).toBe(ignore)
    // an agent's `git add -A` does not pick up helix's runtime files
    for (const f of ['.ddx/helix.pid', '.ddx/run-state.json', '.ddx/beads.jsonl.tmp-1', '.helix/context.md', '.helix-logs/helix-1.log', '.ddx/beads.lock/pid']) {
      mkdirSync(path.dirname(path.join(dir, f)), {recursive: true})
      writeFileSync(path.join(dir, f), 'x')
    }
    spawnSync('git', ['add', '-A'], {cwd: dir})
    const staged = spawnSync('git', ['diff', '--cached', '--name-only'], {cwd: dir, encoding: 'utf8'}).stdout.trim().split('\n').sort()
    expect(staged).toEqual(['.ddx/beads.jsonl', '.ddx/config.yaml', '.gitattributes', '.gitignore'])
  })

  it('tracker init without git creates .ddx/ in the cwd', async () => {
    const dir = temp()
    expect((await helix(dir, ['tracker', 'init'])).code).toBe(0)
    expect(existsSync(path.join(dir, '.ddx', 'beads.jsonl'))).toBe(true)
    expect(readFileSync(path.join(dir, '.gitignore'), 'utf8')).toContain('.ddx/run-state.json\n')
  })

  it('tracker init refuses in one line, exit 1, writing nothing: a file named .ddx in the way, a bare repository', async () => {
    const dir = temp()
    writeFileSync(path.join(dir, '.ddx'), 'not a directory\n')
    const r = await helix(dir, ['tracker', 'init'])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(`helix: cannot create ${path.join(dir, '.ddx')}: a file is in the way (it must be a directory); move that file away, then run 'helix tracker init' again\n`)
    expect(tree(dir)).toEqual(['.ddx'])
    const bare = temp()
    expect(spawnSync('git', ['init', '-q', '--bare', bare]).status).toBe(0)
    const before = tree(bare)
    const b = await helix(bare, ['tracker', 'init'])
    expect(b.code).toBe(1)
    expect(b.stderr).toBe(`helix: ${bare} is a git repository's own directory (a bare repository or inside .git), not a work tree; run 'helix tracker init' in a checkout of it\n`)
    expect(tree(bare)).toEqual(before)
  })

  it('a file named .helix-logs in the way: run and start say so in one line, not an internal error', async () => {
    const {project} = await import('./helpers.js')
    const root = project({beads: [{id: 'hx-a', title: 'A'} as never]})
    writeFileSync(path.join(root, '.helix-logs'), 'not a directory\n')
    const want = `helix: cannot create ${path.join(root, '.helix-logs')}: a file is in the way (it must be a directory); move that file away, then try again`
    const r = await helix(root, ['run', '--agent', '/bin/true', '--no-auto-review', '--summary'])
    expect(r.code).toBe(1)
    expect(r.stderr.split('\n')[0]).toBe(want)
    const s = await helix(root, ['start', '--agent', '/bin/true'])
    expect(s.code).toBe(1)
    expect(s.stderr).toBe(`${want}\n`)
  })
})
