/**
 * The operator surface through the built CLI: only inside a project (16.1), one
 * meaning of blocked (16.2), unknown commands, doctor's agent flags, logs --lines
 * and the help text (16.6).
 */
import {chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helix} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

// Part 1 of 2 (split for the suite's parallel workers): 16.1 only inside a project.
// Part 2, surface-small: 16.2 one meaning of blocked and 16.6 small things.

/** a temp dir, removed after the test (test/support/tmp.ts) */
const temp = (prefix = 'helix-surface-'): string => makeTempDir(prefix)
/** Every path under `dir` (files and directories), sorted: "nothing on disk changed". */
function tree(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, {withFileTypes: true})) {
      const p = path.join(d, e.name)
      out.push(path.relative(dir, p) + (e.isDirectory() ? '/' : ''))
      if (e.isDirectory() && e.name !== '.git') walk(p)
    }
  }
  walk(dir)
  return out.sort()
}

const NOT_PROJECT = "helix: not a helix project (no .ddx/ here or above); run 'helix tracker init' at the project root\n"

/** A git repository with no .ddx/ (and a subdirectory), an agent that leaves a marker if it ever runs, and what is on disk. */
function outside(): {dir: string; sub: string; agent: string; marker: string; before: string[]} {
  const dir = temp()
  spawnSync('git', ['init', '-q'], {cwd: dir})
  const sub = path.join(dir, 'sub')
  mkdirSync(sub)
  const marker = path.join(dir, 'agent-ran')
  const agent = path.join(dir, 'agent.sh')
  writeFileSync(agent, `#!/bin/sh\ntouch '${marker}'\necho COMPLETE\n`)
  chmodSync(agent, 0o755)
  return {dir, sub, agent, marker, before: tree(dir)}
}

/** every command once, from the git top level or a subdirectory in turn (all of them
 * share findProjectRoot, whose walk up is unit-tested in test/util/root.test.ts) */
function refusesEach(o: {dir: string; sub: string}, commands: string[][]): void {
  commands.forEach((args, i) => {
    const r = helix(i % 2 ? o.sub : o.dir, args)
    expect(r.code, `helix ${args.join(' ')}`).toBe(1)
    expect(r.stderr, `helix ${args.join(' ')}`).toBe(NOT_PROJECT)
    expect(r.stdout).toBe('')
  })
}

// "every command" is two tests (the run and operator commands; the tracker commands and the
// fast path), so no single test spawns the CLI twenty times
describe('16.1 only inside a project', () => {
  it('outside a project every run and operator command refuses in one line, exit 1, and writes nothing; an agent is never started', () => {
    const o = outside()
    refusesEach(o, [['status'], ['status', '--json'], ['next'], ['run', '--agent', o.agent, '--max-cycles', '1'], ['start', '--agent', o.agent], ['stop'], ['recover'], ['logs'], ['report'], ['unblock', 'hx-1'], ['check', '--agent', o.agent]])
    expect(existsSync(o.marker)).toBe(false)
    expect(tree(o.dir)).toEqual(o.before)
  })

  it('outside a project every tracker command refuses in one line, exit 1, and writes nothing; the fast path and oclif say the same', () => {
    const o = outside()
    refusesEach(o, [['tracker', 'create', 'A title'], ['tracker', 'ready'], ['tracker', 'ready', '--json'], ['tracker', 'status'], ['tracker', 'list'], ['tracker', 'blocked'], ['tracker', 'show', 'hx-1']])
    // the startup fast path (status, tracker show/close <id>) and oclif say the same
    for (const args of [['status'], ['tracker', 'show', 'hx-1'], ['tracker', 'close', 'hx-1']]) {
      const r = helix(o.dir, args, {HELIX_NO_FAST_PATH: '1'})
      expect(r.code).toBe(1)
      expect(r.stderr).toBe(NOT_PROJECT)
    }
    expect(tree(o.dir)).toEqual(o.before)
  })

  it('help and --version work outside a project; doctor says the same line and exits 1', () => {
    const dir = temp()
    expect(helix(dir, ['--help']).code).toBe(0)
    expect(helix(dir, ['help', 'status']).code).toBe(0)
    // help for a command nobody has: one line and exit 1 like any unknown command (oclif's plugin said exit 2, which means busy)
    const h = helix(dir, ['help', 'stauts'])
    expect([h.code, h.stdout, h.stderr]).toEqual([1, '', "helix: unknown command 'stauts' (did you mean 'status'?)\n"])
    expect(helix(dir, ['--version']).stdout).toMatch(/^helix-cli\/\d/)
    const d = helix(dir, ['doctor'])
    expect(d.code).toBe(1)
    expect(d.stderr).toBe(NOT_PROJECT)
    // issue 20: said once (the stderr line above), not again as a FAIL line
    expect(d.stdout).not.toMatch(/not a helix project/)
    expect(d.stdout).toMatch(/^ok {4}node: v\d/m)
    expect(readdirSync(dir)).toEqual([])
  })

  it('an explicit DDX_BEAD_DIR is a project', () => {
    const dir = temp()
    const beads = temp('helix-beads-')
    writeFileSync(path.join(beads, 'beads.jsonl'), JSON.stringify({id: 'hx-1', title: 'One', status: 'open'}) + '\n')
    const r = helix(dir, ['tracker', 'ready'], {DDX_BEAD_DIR: beads})
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^hx-1 /)
  })

  it('tracker init: .ddx/ at the git top level with the runtime paths in .gitignore, once; git add -A then skips them', () => {
    const dir = temp()
    spawnSync('git', ['init', '-q'], {cwd: dir})
    writeFileSync(path.join(dir, '.gitignore'), 'node_modules/')
    mkdirSync(path.join(dir, 'pkg'))
    const r = helix(path.join(dir, 'pkg'), ['tracker', 'init'])
    expect(r.code).toBe(0)
    expect(existsSync(path.join(dir, '.ddx', 'beads.jsonl'))).toBe(true)
    expect(existsSync(path.join(dir, 'pkg', '.ddx'))).toBe(false)
    expect(r.stdout).toContain('added to .gitignore: .helix/ .helix-logs/ .ddx/helix.pid .ddx/run-state.json .ddx/beads.lock/ .ddx/*.tmp*')
    const ignore = readFileSync(path.join(dir, '.gitignore'), 'utf8')
    expect(ignore).toBe('node_modules/\n# helix runtime files\n.helix/\n.helix-logs/\n.ddx/helix.pid\n.ddx/run-state.json\n.ddx/beads.lock/\n.ddx/*.tmp*\n')
    // idempotent
    const again = helix(dir, ['tracker', 'init'])
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

  it('tracker init without git creates .ddx/ in the cwd', () => {
    const dir = temp()
    expect(helix(dir, ['tracker', 'init']).code).toBe(0)
    expect(existsSync(path.join(dir, '.ddx', 'beads.jsonl'))).toBe(true)
    expect(readFileSync(path.join(dir, '.gitignore'), 'utf8')).toContain('.ddx/run-state.json\n')
  })
})
