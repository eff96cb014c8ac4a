import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import type {Bead} from '../../src/tracker/types.js'
import {helixInProcess} from '../support/in-process.js'
import {helix, project, REAL_DDX} from './helpers.js'

// The fast path is a process (bin/run.js without oclif): each of its answers is spawned. What
// it is compared with, the oclif command, runs in-process (test/support/in-process.ts): the
// same command class the bundled oclif entry runs, without a second CLI start per answer.
// Which argv shapes take the fast path, and the parse cache's answers: fast-path.test.ts.

describe('startup fast path (bin/run.js without oclif)', () => {
  // the DDx tracker: its ready list is ~1.5 MB of JSON, larger than a pipe buffer
  const oclif = (cwd: string, args: string[], env: Record<string, string> = {}) => helixInProcess(cwd, args, env)
  // ages tick between the two runs; everything else must match byte for byte
  const norm = (t: string) => t.replace(/"age_seconds": \d+/g, '"age_seconds": 0').replace(/"claim_age_seconds": \d+/g, '')
  async function sameAsOclif(argvs: string[][]): Promise<void> {
    const root = project({copy: REAL_DDX})
    for (const args of argvs) {
      const fast = helix(root, args)
      const slow = await oclif(root, args)
      expect({args, code: fast.code, err: fast.stderr}).toEqual({args, code: 0, err: ''})
      expect({args, code: slow.code, err: slow.stderr}).toEqual({args, code: 0, err: ''})
      expect(fast.stdout.length).toBeGreaterThan(0)
      // (a 1.5 MB answer on a pipe: the fast path must not exit before stdout drains)
      expect(norm(fast.stdout) === norm(slow.stdout)).toBe(true)
    }
  }

  // (three tests, not one: each pair of runs parses the real 1.5 MB tracker twice)
  it('status prints exactly what the oclif command prints', async () => {
    await sameAsOclif([['status'], ['status', '--json']])
  })

  it('tracker show and tracker close print what the oclif commands print, refusals included', async () => {
    const beads: Bead[] = [
      {id: 'hx-a', title: 'a <b>\u001b[31m', status: 'open', description: 'd'},
      {id: 'hx-b', title: 'waits on a', status: 'open', dependencies: [{issue_id: 'hx-b', depends_on_id: 'hx-a', type: 'blocks'}]},
      {id: 'hx-c', title: 'claimed', status: 'in_progress', 'claim-token': 'feedfacefeedface'},
    ]
    // each close changes the tracker, so the fast and the oclif run each get a fresh project
    const twice = async (args: string[], env: Record<string, string> = {}) => {
      const fast = helix(project({beads}), args, env)
      const slow = await oclif(project({beads}), args, env)
      const stamp = (t: string) => t.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
      expect({args, code: fast.code, out: stamp(fast.stdout), err: fast.stderr}).toEqual({args, code: slow.code, out: stamp(slow.stdout), err: slow.stderr})
      return fast
    }
    expect((await twice(['tracker', 'show', 'hx-a'])).stdout).toContain('hx-a')
    expect(JSON.parse((await twice(['tracker', 'show', 'hx-b', '--json'])).stdout).id).toBe('hx-b')
    expect((await twice(['tracker', 'show', 'hx-nope'])).code).toBe(1)
    expect((await twice(['tracker', 'close', 'hx-a'])).stdout).toBe('closed hx-a\n')
    expect(JSON.parse((await twice(['tracker', 'close', 'hx-a', '--json'])).stdout).status).toBe('closed')
    // refused: a dependency is open; a claim fenced by another token
    expect((await twice(['tracker', 'close', 'hx-b'])).code).not.toBe(0)
    expect((await twice(['tracker', 'close', 'hx-c'], {HELIX_CLAIM_TOKEN: '0123456789abcdef'})).code).not.toBe(0)
    expect((await twice(['tracker', 'close', 'hx-nope'])).stderr).toMatch(/^helix: .*hx-nope/)
  })

  it('a malformed tracker: the same error line as oclif, exit 1', async () => {
    const root = project()
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'oops\n')
    for (const args of [['status'], ['tracker', 'show', 'hx-1']]) {
      const fast = helix(root, args)
      const slow = await oclif(root, args)
      expect(fast.code).toBe(1)
      expect(fast.stderr).toMatch(/^helix: .*beads\.jsonl:1: malformed bead/)
      expect(fast.stderr).toBe(slow.stderr)
    }
  })
})
