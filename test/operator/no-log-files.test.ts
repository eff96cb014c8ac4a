import {existsSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {project} from './helpers.js'

// each command in-process (test/support/in-process.ts): what it writes and refuses; a stray
// word through the real entry (oclif's command lookup), spawned: entry.e2e.test.ts

describe('SPEC 1: status, next, logs, doctor, recover never create a log file', () => {
  it('leaves no .helix-logs behind (and no pwned file from hostile titles)', async () => {
    const root = project({beads: [{id: 'hx-a', title: '$(touch pwned) `touch pwned2` %s %n', status: 'blocked'}, {id: 'hx-b', title: 'b'}]})
    for (const args of [['status'], ['status', '--json'], ['next'], ['logs'], ['doctor'], ['recover'], ['recover', '--dry-run'], ['stop']]) {
      await helix(root, args, {HELIX_AGENT: '/bin/true'})
    }
    expect(existsSync(path.join(root, '.helix-logs'))).toBe(false)
    expect(readdirSync(root).filter((n) => n.startsWith('pwned'))).toEqual([])
    const st = await helix(root, ['status'])
    expect(st.stdout).toContain("hx-a  status 'blocked' — $(touch pwned) `touch pwned2` %s %n")
  })
})

describe('stray words after a command', () => {
  it('are refused in one helix line with exit 1 (not oclif\'s "command not found", exit 2)', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a'}]})
    for (const c of ['status', 'next', 'stop', 'doctor']) {
      const r = await helix(root, [c, 'bogus'])
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr).toBe(`helix ${c}: unexpected argument 'bogus'\n`)
    }
    // `recover <id>` takes one bead id (SPEC 13.3): an unknown one is the error, a second word is stray
    const r = await helix(root, ['recover', 'bogus'])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe("helix: unknown bead 'bogus'\n")
    const two = await helix(root, ['recover', 'hx-a', 'bogus'])
    expect(two.code).toBe(1)
    expect(two.stderr).toBe("helix recover: unexpected argument 'bogus'\n")
  })
})
