// SPEC 19.3: `helix tracker init` in a project that already has a tracker registers the merge
// driver and changes nothing else, in-process (issue 30; was in merge.e2e, which keeps git
// running the driver through the built CLI).
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {git, gitSeq} from '../support/git.js'
import {helixInProcess} from '../support/in-process.js'
import {makeTempDir} from '../support/tmp.js'

describe('tracker init and the merge driver', () => {
  it('tracker init in a project that already has a tracker adds only the registration, changes no bead, exits 0; then nothing', async () => {
    const base = makeTempDir('helix-merge-')
    const dir = path.join(base, 'repo')
    mkdirSync(path.join(dir, '.ddx'), {recursive: true})
    gitSeq(dir, ['init', '-q', '-b', 'main'])
    // the repository's own HOME, no system config: only what init writes is there to read back
    const env = {HOME: base, GIT_CONFIG_NOSYSTEM: '1'}
    const tracker = path.join(dir, '.ddx', 'beads.jsonl')
    const body = '{"id":"hx-1","title":"kept as it is",  "x": 1.0}\n{"id":"hx-0","title":"unsorted"}\n'
    writeFileSync(tracker, body)
    writeFileSync(path.join(dir, '.gitattributes'), '*.png binary')
    const first = await helixInProcess(dir, ['tracker', 'init'], env)
    expect(first.code).toBe(0)
    expect(first.stdout).toContain('registered the tracker merge driver: .gitattributes, merge.helix-beads.driver, merge.helix-beads.name')
    expect(readFileSync(tracker, 'utf8')).toBe(body)
    expect(readFileSync(path.join(dir, '.gitattributes'), 'utf8')).toBe('*.png binary\n.ddx/beads.jsonl merge=helix-beads\n')
    expect(git(dir, 'config', '--get', 'merge.helix-beads.driver')).toBe('helix tracker merge %O %A %B')
    // a driver someone set by hand is theirs
    git(dir, 'config', 'merge.helix-beads.driver', '/opt/helix/bin/helix tracker merge %O %A %B')
    const again = await helixInProcess(dir, ['tracker', 'init'], env)
    expect(again.code).toBe(0)
    expect(again.stdout).toMatch(/^already initialized/)
    expect(git(dir, 'config', '--get', 'merge.helix-beads.driver')).toBe('/opt/helix/bin/helix tracker merge %O %A %B')
    expect(readFileSync(tracker, 'utf8')).toBe(body)
  })
})
