import {spawnSync} from 'node:child_process'
import {mkdirSync, writeFileSync, chmodSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {gitGates} from '../../src/app/wiring.js'
import {makeTempDir} from '../support/tmp.js'

function repo(): string {
  const root = makeTempDir('helix-gates-')
  spawnSync('git', ['init', '-q'], {cwd: root})
  return root
}

const git = (root: string, ...args: string[]) => spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {cwd: root})

describe('gates (real git, real scripts)', () => {
  it('change size since the marker: committed + uncommitted + untracked, helix paths excluded', async () => {
    const root = repo()
    writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\n')
    git(root, 'add', '.')
    git(root, 'commit', '-qm', 'a')
    const g = gitGates(root, () => {})
    const mark = await g.mark()
    expect(mark).toMatch(/^[0-9a-f]{40}$/)
    writeFileSync(path.join(root, 'a.txt'), 'one\nTWO\nthree\n')
    git(root, 'commit', '-qam', 'b')
    writeFileSync(path.join(root, 'b.txt'), 'x\ny\nz\n')
    mkdirSync(path.join(root, '.helix-logs'))
    writeFileSync(path.join(root, '.helix-logs', 'l.log'), 'a\nb\n')
    mkdirSync(path.join(root, '.ddx'))
    writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), '{}\n')
    expect(await g.changedSince(mark)).toEqual({lines: 3 + 3, files: 2})
  })

  it('what was already uncommitted or untracked at cycle start is not the cycle\'s change', async () => {
    const root = repo()
    writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\n')
    writeFileSync(path.join(root, 'keep.txt'), 'k\n')
    git(root, 'add', '.')
    git(root, 'commit', '-qm', 'a')
    // the operator's own dirt before the cycle: 3 untracked files and an edited tracked file
    for (const n of ['s1.txt', 's2.txt', 's3.txt']) writeFileSync(path.join(root, n), 'x\n'.repeat(50))
    writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\n' + 'more\n'.repeat(200))
    const g = gitGates(root, () => {})
    const mark = await g.mark()
    // nothing changed during the cycle
    expect(await g.changedSince(mark)).toEqual({lines: 0, files: 0})
    // the cycle adds one line to the dirty file, edits a clean one, adds a new file
    writeFileSync(path.join(root, 'a.txt'), 'one\ntwo\n' + 'more\n'.repeat(201))
    writeFileSync(path.join(root, 'keep.txt'), 'K\n')
    writeFileSync(path.join(root, 'new.txt'), '1\n2\n')
    expect(await g.changedSince(mark)).toEqual({lines: 1 + 2 + 2, files: 3})
  })

  it('repo without commits uses the empty tree; outside git the size is unknown', async () => {
    const root = repo()
    const g = gitGates(root, () => {})
    const mark = await g.mark()
    expect(mark).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904')
    writeFileSync(path.join(root, 'n.txt'), '1\n2\n')
    expect(await g.changedSince(mark)).toEqual({lines: 2, files: 1})
    const plain = makeTempDir('helix-nogit-')
    const h = gitGates(plain, () => {})
    expect(await h.mark()).toBeNull()
    expect(await h.changedSince(null)).toBeNull()
  })

  it('acceptance scripts: only executable check-acceptance-*.sh; exit codes; a hanging script is killed at the timeout', async () => {
    const root = repo()
    mkdirSync(path.join(root, 'scripts'))
    const put = (name: string, body: string, mode = 0o755) => {
      writeFileSync(path.join(root, 'scripts', name), body)
      chmodSync(path.join(root, 'scripts', name), mode)
    }
    put('check-acceptance-a.sh', '#!/bin/sh\nexit 0\n')
    put('check-acceptance-b.sh', '#!/bin/sh\nexit 3\n')
    put('check-acceptance-c.sh', '#!/bin/sh\nexit 1\n', 0o644)
    put('other.sh', '#!/bin/sh\nexit 1\n')
    put('check-acceptance-hang.sh', '#!/bin/sh\nsleep 30 &\nwait\n')
    const logs: string[] = []
    const g = gitGates(root, (m) => logs.push(m), {timeoutSec: 1})
    const scripts = await g.acceptanceScripts()
    expect(scripts.map((s) => path.basename(s))).toEqual(['check-acceptance-a.sh', 'check-acceptance-b.sh', 'check-acceptance-hang.sh'])
    expect(await g.runScript(scripts[0])).toBe(0)
    expect(await g.runScript(scripts[1])).toBe(3)
    expect(await g.runScript(scripts[2])).not.toBe(0)
    expect(logs).toContain('acceptance script timed out')
  })
})

describe('commits of a cycle (run history, SPEC 16.5)', () => {
  it('head and commitsSince: the commits made after the claim, oldest first; none outside git', async () => {
    const root = repo()
    const outside = makeTempDir('helix-gates-nogit-')
    {
      const g = gitGates(root, () => {})
      expect(await g.head!()).toBeNull()
      git(root, 'commit', '-q', '--allow-empty', '-m', 'base')
      const before = await g.head!()
      expect(before).toMatch(/^[0-9a-f]{40}$/)
      git(root, 'commit', '-q', '--allow-empty', '-m', 'one')
      const one = await g.head!()
      git(root, 'commit', '-q', '--allow-empty', '-m', 'two')
      const two = await g.head!()
      expect(await g.commitsSince!(before)).toEqual([one, two])
      expect(await g.commitsSince!(two)).toEqual([])
      const n = gitGates(outside, () => {})
      expect(await n.head!()).toBeNull()
      expect(await n.commitsSince!(null)).toEqual([])
    }
  })
})
