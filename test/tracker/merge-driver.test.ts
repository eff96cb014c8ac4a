// registerMergeDriver (called by tracker init and by --remote runs) and runMergeDriver
// (what git runs), on real files and a real git repository.
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {GITATTRIBUTES_LINE, MERGE_DRIVER_COMMAND, registerMergeDriver, runMergeDriver} from '../../src/remote/merge-driver.js'
import {makeTempDir} from '../support/tmp.js'
import {BIN} from '../support/cli.js'
import {testEnv} from '../support/env.js'

const env = {...process.env, GIT_CONFIG_NOSYSTEM: '1'}

describe('registerMergeDriver', () => {
  it('outside a git work tree: nothing registered, nothing written', async () => {
    const dir = makeTempDir('helix-merge-reg-')
    const r = await registerMergeDriver(dir, {...env, HOME: dir})
    expect(r).toMatchObject({git: false, added: []})
    expect(spawnSync('ls', ['-A', dir], {encoding: 'utf8'}).stdout).toBe('')
  })

  it('in a repository: adds the attributes line and both config keys once, from a subdirectory project too', async () => {
    const top = makeTempDir('helix-merge-reg-')
    spawnSync('git', ['init', '-q'], {cwd: top})
    const root = path.join(top, 'sub')
    mkdirSync(root)
    const e = {...env, HOME: top}
    const first = await registerMergeDriver(root, e)
    expect(first).toMatchObject({git: true, added: ['.gitattributes', 'merge.helix-beads.driver', 'merge.helix-beads.name']})
    expect(readFileSync(path.join(root, '.gitattributes'), 'utf8')).toBe(`${GITATTRIBUTES_LINE}\n`)
    expect(spawnSync('git', ['config', '--get', 'merge.helix-beads.driver'], {cwd: top, encoding: 'utf8'}).stdout).toBe(`${MERGE_DRIVER_COMMAND}\n`)
    // git sees the attribute for the tracker of the project in sub/
    expect(spawnSync('git', ['check-attr', 'merge', 'sub/.ddx/beads.jsonl'], {cwd: top, encoding: 'utf8'}).stdout).toBe('sub/.ddx/beads.jsonl: merge: helix-beads\n')
    expect((await registerMergeDriver(root, e)).added).toEqual([])
    expect(readFileSync(path.join(root, '.gitattributes'), 'utf8')).toBe(`${GITATTRIBUTES_LINE}\n`)
  })
})

describe('runMergeDriver', () => {
  it('writes the merge over ours; on a bad side throws and leaves ours as it was', async () => {
    const dir = makeTempDir('helix-merge-run-')
    const f = (name: string, text: string) => {
      writeFileSync(path.join(dir, name), text)
      return path.join(dir, name)
    }
    const base = f('base', '{"id":"a","title":"t"}\n')
    const ours = f('ours', '{"id":"a","title":"t","priority":1}\n')
    const theirs = f('theirs', '{"id":"a","title":"t"}\n{"id":"b","title":"new"}\n')
    expect((await runMergeDriver({base, ours, theirs})).notices).toEqual([])
    expect(readFileSync(ours, 'utf8')).toBe('{"id":"a","title":"t","priority":1}\n{"id":"b","title":"new"}\n')
    const bad = f('bad', '{"id":"a"\n')
    const before = readFileSync(ours)
    await expect(runMergeDriver({base, ours, theirs: bad})).rejects.toThrow(/^tracker merge: theirs:1: malformed bead/)
    await expect(runMergeDriver({base: dir, ours, theirs})).rejects.toThrow(`tracker merge: base ${dir} is not a regular file`)
    await expect(runMergeDriver({base, ours, theirs: path.join(dir, 'missing')})).rejects.toThrow(/^tracker merge: cannot read theirs/)
    expect(readFileSync(ours).equals(before)).toBe(true)
  })

  it('a write cut short (a file size limit) leaves ours whole: git puts %A in the work tree when the driver fails', () => {
    const dir = makeTempDir('helix-merge-efbig-')
    const lines = Array.from({length: 3000}, (_, i) => JSON.stringify({id: `b-${String(i).padStart(5, '0')}`, title: `bead ${i}`, status: 'open'}))
    const side = (name: string, at: number, title: string) => {
      const l = [...lines]
      l[at] = JSON.stringify({id: `b-${String(at).padStart(5, '0')}`, title, status: 'open'})
      writeFileSync(path.join(dir, name), l.join('\n') + '\n')
      return path.join(dir, name)
    }
    writeFileSync(path.join(dir, 'O'), lines.join('\n') + '\n')
    const ours = side('A', 5, 'ours')
    side('B', 2000, 'theirs')
    const before = readFileSync(ours)
    expect(before.length).toBeGreaterThan(100 * 1024)
    // 64 blocks (32 or 64 KB by the shell's unit): reading is free, any write past it fails
    const r = spawnSync('sh', ['-c', `ulimit -f 64; exec "${process.execPath}" "$0" tracker merge O A B`, BIN], {cwd: dir, env: {...testEnv(), NODE_ENV: 'production'}, encoding: 'utf8'})
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/^helix: tracker merge: cannot write A: /)
    expect(readFileSync(ours).equals(before)).toBe(true)
    expect(readdirSync(dir).sort()).toEqual(['A', 'B', 'O'])
  })
})
