/**
 * 16.1 only inside a project, through the built CLI: the startup fast path's refusals,
 * help and --version outside a project, doctor's exit. Every command's refusal, tracker
 * init and DDX_BEAD_DIR run in-process: surface-project.test.ts.
 */
import {chmodSync, mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helix} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

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

describe('16.1 only inside a project', () => {
  // every command's refusal: surface-project.test.ts, in-process; here the startup fast
  // path's (status, tracker show/close <id>), which no command class runs
  it('outside a project the fast path refuses in one line, exit 1, and writes nothing', () => {
    const o = outside()
    refusesEach(o, [['status'], ['tracker', 'show', 'hx-1'], ['tracker', 'close', 'hx-1'], ['status', '--json']])
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
})
