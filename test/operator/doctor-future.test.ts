/** `helix doctor` surfaces a claimed-at in the future (SPEC 13.3) with the fix `helix recover <id>`. */
import {readFileSync} from 'node:fs'
import {hostname} from 'node:os'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {project} from './helpers.js'

// doctor in-process (test/support/in-process.ts)

describe('helix doctor: future claimed-at', () => {
  it('is a WARN naming the bead and the value, fixed by helix recover <id>; read-only', async () => {
    const at = new Date(Date.now() + 48 * 3600_000).toISOString()
    const root = project({
      beads: [
        {id: 'hx-fut', title: 'f', status: 'in_progress', owner: 'helix', 'claimed-at': at, 'claimed-pid': 1, 'claimed-machine': hostname()},
        {id: 'hx-ok', title: 'o', status: 'open'},
      ] as never,
    })
    const file = path.join(root, '.ddx', 'beads.jsonl')
    const before = readFileSync(file)
    const r = await helix(root, ['doctor'])
    expect(r.stdout).toContain(`WARN  claims: 1 claim(s) with claimed-at in the future (no evidence of age, never reclaimed by age): hx-fut (${at})\n      fix: 'helix recover hx-fut' (releases it when its claimer is not live)\n`)
    expect(r.stdout).toMatch(/^ok +tracker: \.ddx\/beads\.jsonl: 2 beads$/m)
    const j = JSON.parse((await helix(root, ['doctor', '--json'])).stdout)
    expect(j.checks.filter((c: any) => c.what === 'claims' && c.level === 'warn')).toHaveLength(1)
    expect(readFileSync(file).equals(before)).toBe(true)
  })

  it('no future claim, no such line; a future updated_at is its own tracker WARN', async () => {
    const root = project({beads: [{id: 'hx-a', title: 'a', status: 'open', updated_at: new Date(Date.now() + 48 * 3600_000).toISOString()}] as never})
    const r = await helix(root, ['doctor'])
    expect(r.stdout).not.toMatch(/claimed-at in the future/)
    expect(r.stdout).toMatch(/^WARN {2}tracker: 1 timestamp\(s\) in the future \(clock skew\?\): hx-a updated_at$/m)
  })
})
