/**
 * 16.6 small things through the built CLI: unknown commands (oclif's lookup, before any
 * command) and the help text. Doctor's agent flags and logs --lines run in-process:
 * surface-small.test.ts.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helix, project, REPO} from './helpers.js'
import {makeTempDir} from '../support/tmp.js'

// (16.1: surface-project; 16.2, one meaning of blocked, runs in-process: surface-blocked.test.ts)

/** a temp dir, removed after the test (test/support/tmp.ts) */
const temp = (prefix = 'helix-surface-'): string => makeTempDir(prefix)
const proj = (beads: object[]): string => project({beads: beads as never})

describe('16.6 small things', () => {
  it('an unknown command or topic exits 1 with a did-you-mean, never 2', () => {
    const root = proj([])
    for (const [args, line] of [
      [['stauts'], "helix: unknown command 'stauts' (did you mean 'status'?)\n"],
      [['tracker', 'redy'], "helix: unknown command 'tracker redy' (did you mean 'tracker ready'?)\n"],
      [['raport'], "helix: unknown command 'raport' (did you mean 'report'?)\n"],
      [['zzqqxx'], "helix: unknown command 'zzqqxx'; run 'helix help' for the list\n"],
    ] as const) {
      const r = helix(root, [...args])
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.stderr).toBe(line)
    }
  })

  it('every flag and argument in every --help has a description, option flags state their default, and no help mentions SPEC', () => {
    const manifest = JSON.parse(readFileSync(path.join(REPO, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<string, {description?: string; summary?: string; examples?: unknown; flags: Record<string, {description?: string; default?: unknown; hidden?: boolean; type: string; required?: boolean}>; args: Record<string, {description?: string; hidden?: boolean}>}>
    }
    const problems: string[] = []
    const ids = Object.keys(manifest.commands)
    expect(ids.length).toBeGreaterThan(25)
    for (const [id, c] of Object.entries(manifest.commands)) {
      for (const [name, f] of Object.entries(c.flags)) {
        if (f.hidden || name === 'help') continue
        if (!f.description?.trim()) problems.push(`${id} --${name}: no description`)
        else if (f.type !== 'boolean' && !f.required && f.default === undefined && !/default/i.test(f.description)) problems.push(`${id} --${name}: no default stated`)
      }
      for (const [name, a] of Object.entries(c.args)) if (!a.hidden && !a.description?.trim()) problems.push(`${id} ${name}: argument without description`)
      if (/SPEC/.test(JSON.stringify([c.description, c.summary, c.examples, c.flags, c.args]))) problems.push(`${id}: mentions SPEC`)
    }
    expect(problems).toEqual([])
    // and the rendered help of a few commands
    const help = temp()
    for (const args of [['run', '--help'], ['doctor', '--help'], ['report', '--help'], ['status', '--help'], ['tracker', 'update', '--help']]) {
      const r = helix(help, args)
      expect(r.code).toBe(0)
      expect(r.stdout).not.toMatch(/SPEC/)
      if (args[0] === 'report') expect(r.stdout).toMatch(/--since=24h\|DATE +\[default: 24h\] /)
    }
  })
})
