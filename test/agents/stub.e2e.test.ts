import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {CLI, stubProject, type StubEnv} from './helpers.js'

// The stub agent drives the real (built) tracker CLI; these tests pin the script
// format other areas rely on.

function helix(p: StubEnv, args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], {cwd: p.root, env: p.env, encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`helix ${args.join(' ')} failed: ${r.stderr}`)
  return r.stdout.trim()
}

function stub(p: StubEnv, as: 'codex' | 'claude' | 'command', prompt: string, env: NodeJS.ProcessEnv = {}) {
  const file = p.paths[as]
  const args = as === 'codex' ? ['exec', prompt] : []
  const r = spawnSync(file, args, {cwd: p.root, env: {...p.env, ...env}, input: as === 'codex' ? undefined : prompt, encoding: 'utf8'})
  return {code: r.status, out: r.stdout + r.stderr}
}

function beads(p: StubEnv): Array<Record<string, any>> {
  return readFileSync(path.join(p.root, '.ddx', 'beads.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
}

const impl = (id: string) => `HELIX implementation action\nImplementation target: ${id}\n`

describe('stub agent', () => {
  it('close / per-bead lists / last step repeats / fail', () => {
    const p = stubProject()
    helix(p, ['tracker', 'init'])
    const a = helix(p, ['tracker', 'create', 'A'])
    const b = helix(p, ['tracker', 'create', 'B'])
    p.script({implementation: {[a]: ['fail', 'close'], default: ['noop']}})
    expect(stub(p, 'command', impl(a)).code).toBe(1)
    expect(stub(p, 'command', impl(b)).code).toBe(0)
    expect(stub(p, 'command', impl(a)).code).toBe(0)
    expect(beads(p).find((x) => x.id === a)!.status).toBe('closed')
    expect(beads(p).find((x) => x.id === b)!.status ?? 'open').toBe('open')
    expect(p.calls().map((c) => [c.bead, c.step])).toEqual([
      [a, 'fail'],
      [b, 'noop'],
      [a, 'close'],
    ])
  })

  it('close-then-fail, set, create-children', () => {
    const p = stubProject()
    helix(p, ['tracker', 'init'])
    const a = helix(p, ['tracker', 'create', 'A'])
    const b = helix(p, ['tracker', 'create', 'B'])
    p.script({implementation: {[a]: ['set:spec-id=SPEC-9 create-children:2'], [b]: ['close-then-fail']}})
    expect(stub(p, 'claude', impl(a)).code).toBe(0)
    expect(stub(p, 'codex', impl(b)).code).toBe(1)
    const all = beads(p)
    expect(all.find((x) => x.id === a)!['spec-id']).toBe('SPEC-9')
    expect(all.filter((x) => x.parent === a).map((x) => x.title).sort()).toEqual([`Child 1 of ${a}`, `Child 2 of ${a}`])
    expect(all.find((x) => x.id === b)!.status).toBe('closed')
  })

  it('review findings are filed as review-finding beads', () => {
    const p = stubProject()
    helix(p, ['tracker', 'init'])
    p.script({review: ['review:ISSUES_FOUND:2']})
    const r = stub(p, 'command', 'HELIX fresh-eyes review\n')
    expect(r.out).toContain('REVIEW_STATUS: ISSUES_FOUND')
    expect(r.out).toContain('FINDINGS_FILED: 2')
    expect(beads(p).filter((x) => (x.labels ?? []).includes('review-finding'))).toHaveLength(2)
  })

  it('a close under a stale claim token is refused by the tracker', () => {
    const p = stubProject()
    helix(p, ['tracker', 'init'])
    const a = helix(p, ['tracker', 'create', 'A'])
    helix(p, ['tracker', 'update', a, '--claim'])
    const r = stub(p, 'command', impl(a), {HELIX_CLAIM_TOKEN: 'not-the-token'})
    expect(r.out).toContain('token mismatch')
    expect(beads(p).find((x) => x.id === a)!.status).toBe('in_progress')
  })
})
