import {spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {stubProject, type StubEnv} from './helpers.js'

// The stub agent is test infrastructure: what other tests rely on is its script format
// (per-bead step lists, a default list, the last step repeating) in each dialect, and that
// its `close` goes through the real (built) tracker CLI. Its other steps (set:,
// create-children:, review:…) are pinned where they are used (loop/run-*.e2e).

function stub(p: StubEnv, as: 'codex' | 'claude' | 'command', prompt: string) {
  const file = p.paths[as]
  const args = as === 'codex' ? ['exec', prompt] : []
  const r = spawnSync(file, args, {cwd: p.root, env: p.env, input: as === 'codex' ? undefined : prompt, encoding: 'utf8'})
  return {code: r.status, out: r.stdout + r.stderr}
}

function status(p: StubEnv, id: string): string {
  const line = readFileSync(path.join(p.root, '.ddx', 'beads.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((b) => b.id === id)
  return line.status
}

const impl = (id: string) => `HELIX implementation action\nImplementation target: ${id}\n`

describe('stub agent', () => {
  it('per-bead lists, a default list, the last step repeats, fail; close goes through the real tracker, in every dialect', () => {
    const p = stubProject()
    writeFileSync(path.join(p.root, '.ddx', 'beads.jsonl'), ['hx-a', 'hx-b'].map((id) => JSON.stringify({id, title: id, status: 'open'}) + '\n').join(''))
    p.script({implementation: {'hx-a': ['fail', 'close'], default: ['noop']}})
    expect(stub(p, 'command', impl('hx-a')).code).toBe(1)
    expect(stub(p, 'codex', impl('hx-b')).code).toBe(0)
    expect(stub(p, 'claude', impl('hx-b')).code).toBe(0)
    expect(stub(p, 'claude', impl('hx-a')).code).toBe(0)
    expect(status(p, 'hx-a')).toBe('closed')
    expect(status(p, 'hx-b')).toBe('open')
    expect(p.calls().map((c) => [c.as, c.bead, c.step])).toEqual([
      ['command', 'hx-a', 'fail'],
      ['codex', 'hx-b', 'noop'],
      ['claude', 'hx-b', 'noop'],
      ['claude', 'hx-a', 'close'],
    ])
  })
})
