/**
 * 16.1 only inside a project, through the built CLI: the startup fast path's refusals,
 * help and --version outside a project, doctor's exit. Every command's refusal, tracker
 * init and DDX_BEAD_DIR run in-process: surface-project.test.ts.
 */
import {readdirSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {helix} from './helpers.js'
import {NOT_PROJECT, outside, temp, tree} from './outside.js'

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
