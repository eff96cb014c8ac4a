import {readFileSync, writeFileSync, mkdirSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {sha, tempProject} from './helpers.js'

// helix tracker doctor, import and export in-process (test/support/in-process.ts): what they
// report, move aside and write, without a node start each. Untrusted text through the built
// CLI: cli-text.e2e.test.ts.

describe('helix tracker: doctor, import, export (in-process)', () => {
  it('doctor reports problems and --repair moves malformed and losing duplicate lines aside', async () => {
    const body = [
      '{"id":"a","title":"old a"}',
      'garbage line',
      '{"dependencies":[{"issue_id":"b","depends_on_id":"ghost","type":"blocks"}],"id":"b","parent":"nobody"}',
      '{"id":"a","title":"new a"}',
      '{"dependencies":[{"issue_id":"c","depends_on_id":"d","type":"blocks"}],"id":"c"}',
      '{"dependencies":[{"issue_id":"d","depends_on_id":"c","type":"blocks"}],"id":"d"}',
      '{"claimed-at":"2020-01-01T00:00:00Z","claimed-machine":"elsewhere","id":"e","owner":"helix","status":"in_progress"}',
      '{"id":"f","priority":9}',
    ].join('\n') + '\n'
    const {root, paths} = tempProject(body)
    const h = sha(paths.file)
    const r = await helix(root, ['tracker', 'doctor'])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(`${paths.file}:2: malformed bead (invalid JSON`)
    expect(r.stdout).toContain('duplicate id a (the last line wins)')
    expect(r.stdout).toContain('b depends on missing ghost')
    expect(r.stdout).toContain('b has missing parent nobody')
    expect(r.stdout).toContain('dependency cycle: c -> d -> c')
    expect(r.stdout).toContain('stale claim on e')
    expect(r.stdout).toContain('f: invalid field priority')
    expect(sha(paths.file)).toBe(h)
    const j = JSON.parse((await helix(root, ['tracker', 'doctor', '--json'])).stdout)
    expect(j.malformed).toEqual([{line: 2, reason: expect.stringMatching(/^invalid JSON/)}])

    const rep = await helix(root, ['tracker', 'doctor', '--repair'])
    expect(rep.stdout).toMatch(/repaired: moved 2 line\(s\) to .*beads\.jsonl\.rejected-\d{8}T\d{6}Z/)
    const rejected = readdirSync(path.join(root, '.ddx')).find((f) => f.startsWith('beads.jsonl.rejected-'))!
    expect(readFileSync(path.join(root, '.ddx', rejected), 'utf8')).toBe('{"id":"a","title":"old a"}\ngarbage line\n')
    const now = readFileSync(paths.file, 'utf8')
    expect(now).toContain('"title":"new a"')
    expect(now).not.toContain('garbage')
    expect((await helix(root, ['tracker', 'ready'])).code).toBe(0)
  })

  it('imports bd JSONL (field and parent mapping, skips reported) and exports it back', async () => {
    const {root, paths} = tempProject('{"id":"hx-1","title":"existing"}\n')
    mkdirSync(path.join(root, '.beads'))
    writeFileSync(
      path.join(root, '.beads', 'issues.jsonl'),
      [
        JSON.stringify({id: 'bd-1', title: 'epic', issue_type: 'epic', status: 'open', priority: 1, assignee: 'ann', acceptance_criteria: 'works'}),
        JSON.stringify({id: 'bd-2', title: 'kid', status: 'open', priority: 2, dependencies: [{issue_id: 'bd-2', depends_on_id: 'bd-1', type: 'parent-child'}, {issue_id: 'bd-2', depends_on_id: 'hx-1', type: 'blocks'}]}),
        JSON.stringify({id: 'hx-1', title: 'dupe'}),
        'not json',
      ].join('\n') + '\n',
    )
    const r = await helix(root, ['tracker', 'import', '--from', 'bd'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^imported 2 bead\(s\) from .*issues\.jsonl, skipped 2\n$/)
    expect(r.stderr).toContain('helix: skipped hx-1: already in the tracker')
    expect(r.stderr).toContain('helix: skipped line 4: malformed')
    const snap = readFileSync(paths.file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const bd1 = snap.find((b) => b.id === 'bd-1')
    const bd2 = snap.find((b) => b.id === 'bd-2')
    expect(bd1).toMatchObject({owner: 'ann', acceptance: 'works', schema_version: 1})
    expect(bd1.assignee).toBeUndefined()
    expect(bd2.parent).toBe('bd-1')
    expect(bd2.dependencies).toEqual([{issue_id: 'bd-2', depends_on_id: 'hx-1', type: 'blocks'}])

    const out = await helix(root, ['tracker', 'export', '--to', 'bd'])
    const recs = out.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const e1 = recs.find((b) => b.id === 'bd-1')
    const e2 = recs.find((b) => b.id === 'bd-2')
    expect(e1).toMatchObject({assignee: 'ann', acceptance_criteria: 'works'})
    expect(e1.owner).toBeUndefined()
    expect(e2.dependencies).toContainEqual({issue_id: 'bd-2', depends_on_id: 'bd-1', type: 'parent-child'})
    const f = await helix(root, ['tracker', 'export', '--file', 'out/bd.jsonl', '--to', 'bd'])
    expect(f.stderr).toMatch(/exported 3 bead\(s\)/)
    expect(readFileSync(path.join(root, 'out', 'bd.jsonl'), 'utf8')).toBe(out.stdout)
  })
})
