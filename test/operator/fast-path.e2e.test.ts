import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {fastPathKey} from '../../src/cli/fast-path.js'
import {helix, project, REAL_DDX} from './helpers.js'

describe('startup fast path (bin/run.js without oclif)', () => {
  it('handles only the exact hot argv shapes', () => {
    expect(fastPathKey(['status'])).toEqual({key: 'status', json: false})
    expect(fastPathKey(['status', '--json'])).toEqual({key: 'status', json: true})
    expect(fastPathKey(['tracker', 'ready', '--json'])).toEqual({key: 'tracker ready', json: true})
    expect(fastPathKey(['tracker', 'status'])).toEqual({key: 'tracker status', json: false})
    for (const a of [['status', '--watch'], ['status', '--help'], ['status', '--json', '--bogus'], ['--json', 'status'], ['next'], ['tracker'], ['tracker', 'ready', '--execution'], ['constructor'], []]) {
      expect(fastPathKey(a)).toBeNull()
    }
  })

  // the DDx tracker: its ready list is ~1.5 MB of JSON, larger than a pipe buffer
  const oclif = {HELIX_NO_FAST_PATH: '1'}
  // ages tick between the two runs; everything else must match byte for byte
  const norm = (t: string) => t.replace(/"age_seconds": \d+/g, '"age_seconds": 0').replace(/"claim_age_seconds": \d+/g, '')
  function sameAsOclif(argvs: string[][]): void {
    const root = project({copy: REAL_DDX})
    for (const args of argvs) {
      const fast = helix(root, args)
      const slow = helix(root, args, oclif)
      expect({args, code: fast.code, err: fast.stderr}).toEqual({args, code: 0, err: ''})
      expect({args, code: slow.code, err: slow.stderr}).toEqual({args, code: 0, err: ''})
      expect(fast.stdout.length).toBeGreaterThan(0)
      // (a 1.5 MB answer on a pipe: the fast path must not exit before stdout drains)
      expect(norm(fast.stdout) === norm(slow.stdout)).toBe(true)
    }
  }

  // (three tests, not one: each pair of runs parses the real 1.5 MB tracker twice)
  it('status prints exactly what the oclif command prints', () => {
    sameAsOclif([['status'], ['status', '--json']])
  })

  it('tracker ready and tracker status print exactly what the oclif commands print', () => {
    sameAsOclif([['tracker', 'ready', '--json'], ['tracker', 'ready'], ['tracker', 'status', '--json'], ['tracker', 'status']])
  })

  it('a malformed tracker: the same error line as oclif, exit 1', () => {
    const root = project()
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'oops\n')
    for (const args of [['status'], ['tracker', 'ready', '--json']]) {
      const fast = helix(root, args)
      const slow = helix(root, args, oclif)
      expect(fast.code).toBe(1)
      expect(fast.stderr).toMatch(/^helix: .*beads\.jsonl:1: malformed bead/)
      expect(fast.stderr).toBe(slow.stderr)
    }
  })
})
