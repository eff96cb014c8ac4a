import {spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {isFastStatusArgv} from '../../src/status/fast-path.js'
import {env, helix, project, REAL_DDX, REPO} from './helpers.js'

describe('status fast path (no oclif)', () => {
  it('handles only `status` and `status --json`', () => {
    expect(isFastStatusArgv(['status'])).toBe(true)
    expect(isFastStatusArgv(['status', '--json'])).toBe(true)
    for (const a of [['status', '--watch'], ['status', '--help'], ['status', '--json', '--bogus'], ['next'], []]) expect(isFastStatusArgv(a)).toBe(false)
  })

  it('prints exactly what the oclif command prints', () => {
    const root = project({copy: REAL_DDX})
    const entry = path.join(root, 'fast.mjs')
    writeFileSync(
      entry,
      `const {statusFastPath} = await import(${JSON.stringify(path.join(REPO, 'dist', 'status', 'fast-path.js'))})\n` +
        `if (!(await statusFastPath(process.argv.slice(2)))) process.exit(99)\n`,
    )
    for (const args of [['status'], ['status', '--json']]) {
      const fast = spawnSync(process.execPath, [entry, ...args], {cwd: root, env: env(), encoding: 'utf8'})
      const slow = helix(root, args)
      expect(fast.status).toBe(0)
      // ages tick between the two runs; everything else must match byte for byte
      const norm = (t: string) => t.replace(/"age_seconds": \d+/g, '"age_seconds": 0')
      expect(norm(fast.stdout)).toBe(norm(slow.stdout))
    }
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'oops\n')
    const bad = spawnSync(process.execPath, [entry, 'status'], {cwd: root, env: env(), encoding: 'utf8'})
    expect(bad.status).toBe(1)
    expect(bad.stderr).toBe(helix(root, ['status']).stderr)
  })
})
