// SPEC 20.3–20.4 end to end (helix run in-process, real git, the stub agent closing its bead through
// the built CLI): six beads whose
// agents all edit the same line of one file, three workers, a land check, and a
// scripted resolve that merges the line. One bead's work always fails the check.
// Every other bead is implemented once and lands once; no conflict marker and no red
// work ever reaches the base.
import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helixInProcess} from '../support/in-process.js'
import {helixProject} from '../support/project.js'

const IDS = ['hx-a', 'hx-b', 'hx-c', 'hx-d', 'hx-e', 'hx-f']
const RED = 'hx-f'
const MARKER = /^(<<<<<<< |=======|>>>>>>> )/m
// the team's check: no conflict marker in shared.txt, and no red.txt (the red bead's work)
const CHECK = `echo "checking $HELIX_BEAD_ID attempt $HELIX_ATTEMPT on $HELIX_LAND_BASE"; if test -e red.txt; then echo "red.txt must not exist"; exit 1; fi; ! grep -qE '^(<<<<<<< |=======|>>>>>>> )' shared.txt`
const ident = {GIT_AUTHOR_NAME: 'agent', GIT_AUTHOR_EMAIL: 'agent@example.com', GIT_COMMITTER_NAME: 'agent', GIT_COMMITTER_EMAIL: 'agent@example.com'}

describe('land check and resolve', () => {
  it('six beads on one line, three workers: conflicts are resolved, the red bead never lands, nothing is redone', async () => {
    await using p = await helixProject({
      beads: IDS.map((id) => ({id})),
      git: true,
      prefix: 'helix-resolve-',
      agent: {
        implementation: {default: 'append-word:shared.txt commit close', [RED]: 'append-word:shared.txt touch:red.txt commit close'},
        resolve: 'resolve-union',
      },
    })
    writeFileSync(path.join(p.root, 'shared.txt'), 'start\n')
    writeFileSync(path.join(p.root, '.gitignore'), '.ddx/\n')
    p.git('add', 'shared.txt', '.gitignore')
    p.git('-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '-m', 'shared file')
    const base = p.git('symbolic-ref', '--short', 'HEAD')
    const start = p.git('rev-parse', 'HEAD')
    const r = await helixInProcess(p.root, ['run', '--workers', '3', '--land-check', CHECK, '--no-auto-review', '--summary'], {...p.env, ...ident})
    const out = r.stderr
    if (process.env.HELIX_TEST_SHOW) process.stdout.write(out)
    const calls = p.calls()
    const impl = (id: string) => calls.filter((c) => c.action === 'implementation' && c.bead === id).length
    // every other bead: implemented once, closed, its word on the base exactly once
    const line = p.git('show', `${base}:shared.txt`).split('\n')[0] ?? ''
    for (const id of IDS.filter((i) => i !== RED)) {
      expect(impl(id), `${id} implemented once\n${out}`).toBe(1)
      expect(p.beads().get(id)?.status, out).toBe('closed')
      expect(line.split(' ').filter((w) => w === id), `${id} on the base line '${line}'`).toHaveLength(1)
    }
    // the red bead: never landed, its work preserved, open or blocked with a NOT LANDED note
    expect(line.split(' ')).not.toContain(RED)
    const red = p.beads().get(RED)
    expect(red?.status).not.toBe('closed')
    expect(String(red?.notes)).toMatch(/NOT LANDED \[[^\]]+\]: land check failed \(rc=1\), not resolved after 2 round\(s\); work kept at refs\/helix\/preserved\/hx-f\/\d+/)
    // resolve happened, was verified and landed; the lines say so
    const resolves = calls.filter((c) => c.action === 'resolve')
    expect(resolves.length).toBeGreaterThan(0)
    expect(resolves.every((c) => c.env.HELIX_ACTION === 'resolve')).toBe(true)
    expect(String(resolves[0]?.prompt).split('\n')[0]).toMatch(/^HELIX resolve action for the project at .*\.helix\/worktrees\/hx-[a-f]-\d+$/)
    expect(out).toMatch(/w\d cycle \d+: hx-[a-f] CONFLICT in 1 file\(s\) → resolve \(\w+\)/)
    expect(out).toMatch(/w\d cycle \d+: resolved, landed hx-[a-e] \(\d+ commits?, [0-9a-f]{12}\)/)
    expect(out).toMatch(/w\d cycle \d+: hx-[a-e] land check passed \(\d+s\)/)
    expect(out).toMatch(/w\d cycle \d+: hx-f land check FAILED \(rc=1, \d+s\): red\.txt must not exist — log L\d+–L\d+ \(w\d\)/)
    // walk the base's history: the check's logic holds on every commit since the start
    const commits = p.git('rev-list', `${start}..${base}`).split('\n').filter(Boolean)
    expect(commits.length).toBeGreaterThanOrEqual(5)
    for (const c of commits) {
      expect(p.git('show', `${c}:shared.txt`), `commit ${c}`).not.toMatch(MARKER)
      expect(p.git('ls-tree', '--name-only', c), `commit ${c}`).not.toMatch(/^red\.txt$/m)
    }
    // the base moved only forward, and nothing of helix's is left behind
    expect(p.git('merge-base', '--is-ancestor', start, base)).toBe('')
    expect(p.git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1)
    expect(p.git('for-each-ref', '--format=%(refname)', 'refs/heads/helix/')).toBe('')
    // (helix adds its runtime lines to .gitignore, SPEC 16.1)
    expect(p.git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!.gitignore')).toBe('')
  }, 400_000)
})
