// listPreserved (src/recovery/worktrees.ts, session 30): the preserved refs alone, with one
// for-each-ref, as listLeftovers lists them; a run's pruning at start uses it and so runs
// no worktree list. Real repositories.
import {mkdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {listLeftovers, listPreserved} from '../../src/recovery/worktrees.js'
import {g, gitTestEnv, makeRepo} from '../landing/helpers.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

describe('listPreserved', () => {
  it('lists every preserved ref with its bead and attempt, as listLeftovers does', async () => {
    const root = makeRepo('helix-preserved-')
    dirs.push(root)
    const paths = {root}
    expect(await listPreserved(paths, gitTestEnv)).toEqual([])
    g(root, 'update-ref', 'refs/helix/preserved/hx-aaaa0001/2', 'HEAD')
    g(root, 'update-ref', 'refs/helix/preserved/hx-aaaa0002/1', 'HEAD')
    g(root, 'update-ref', 'refs/helix/other/hx-aaaa0003/1', 'HEAD')
    g(root, 'worktree', 'add', '-q', '-b', 'helix/hx-aaaa0001-3', path.join(root, '.helix', 'worktrees', 'hx-aaaa0001-3'), 'main')
    const got = await listPreserved(paths, gitTestEnv)
    expect(got).toEqual([
      {ref: 'refs/helix/preserved/hx-aaaa0001/2', bead: 'hx-aaaa0001', attempt: '2'},
      {ref: 'refs/helix/preserved/hx-aaaa0002/1', bead: 'hx-aaaa0002', attempt: '1'},
    ])
    expect((await listLeftovers(paths, gitTestEnv)).preserved).toEqual(got)
  })

  it('outside a repository: none', async () => {
    const plain = path.join(tmpdir(), `helix-preserved-plain-${process.pid}-${Date.now()}`)
    mkdirSync(plain)
    dirs.push(plain)
    expect(await listPreserved({root: plain}, {...gitTestEnv, GIT_CEILING_DIRECTORIES: tmpdir()})).toEqual([])
  })
})
