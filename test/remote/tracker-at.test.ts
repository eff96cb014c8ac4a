// The remote base's trackerAt (src/remote/base.ts, session 30): the tracker text of a
// commit id is read from git once and then remembered (a commit never changes); a ref
// name is read afresh every time. git calls are counted by a wrapper first on PATH.
import {chmodSync, readFileSync, writeFileSync, existsSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {createRemoteBase} from '../../src/remote/base.js'
import {makeTempDir} from '../support/tmp.js'
import {bead, gitTestEnv, makeFleet} from './helpers.js'

function countingGit(): {env: NodeJS.ProcessEnv; catFiles: () => number} {
  const bin = makeTempDir('helix-git-count-')
  const log = path.join(bin, 'calls')
  const real = ['/usr/bin/git', '/usr/local/bin/git', '/bin/git'].find((p) => existsSync(p)) ?? 'git'
  writeFileSync(path.join(bin, 'git'), `#!/bin/sh\nprintf '%s\\n' "$1" >> '${log}'\nexec '${real}' "$@"\n`)
  chmodSync(path.join(bin, 'git'), 0o755)
  return {
    env: {...gitTestEnv, PATH: `${bin}:${process.env.PATH ?? ''}`},
    catFiles: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l === 'cat-file').length : 0),
  }
}

describe('trackerAt', () => {
  it('reads a commit once, a ref name every time, and a new commit afresh', async () => {
    const fleet = makeFleet([bead('hx-aaaa0001')])
    const host = fleet.clone('h1')
    const {env, catFiles} = countingGit()
    const base = createRemoteBase({root: host, remote: 'origin', base: 'main', trackerRel: '.ddx/beads.jsonl', env, scratch: path.join(host, '.git', 'helix-remote')})
    const tip = (await base.fetch())!
    expect(tip).toMatch(/^[0-9a-f]{40}$/)
    const text = await base.trackerAt(tip)
    expect(text).toContain('"id":"hx-aaaa0001"')
    expect(await base.trackerAt(tip)).toBe(text)
    expect(catFiles()).toBe(1)
    expect(await base.trackerAt(base.trackingRef)).toBe(text)
    expect(await base.trackerAt(base.trackingRef)).toBe(text)
    expect(catFiles()).toBe(3)
    const next = await base.trackerCommit(tip, text + JSON.stringify(bead('hx-aaaa0002')) + '\n', 'add a bead')
    expect(await base.trackerAt(next)).toContain('hx-aaaa0002')
    expect(await base.trackerAt(tip)).toBe(text)
    expect(catFiles()).toBe(5)
    // a commit without the file reads as '' and is not remembered as such
    expect(await base.trackerAt('0'.repeat(40))).toBe('')
    expect(catFiles()).toBe(6)
  })
})
