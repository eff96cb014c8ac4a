import {mkdirSync, rmSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {findProjectRoot, initPaths, NOT_A_PROJECT, projectPaths} from '../../src/util/root.js'
import {makeTempDir} from '../support/tmp.js'

const dirs: string[] = []
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, {recursive: true, force: true})
})
function temp(): string {
  const d = makeTempDir('helix-root-')
  dirs.push(d)
  return d
}

describe('project root discovery (SPEC 16.1)', () => {
  it('finds the nearest ancestor holding .ddx/', () => {
    const top = temp()
    mkdirSync(path.join(top, '.ddx'))
    const deep = path.join(top, 'a', 'b', 'c')
    mkdirSync(deep, {recursive: true})
    expect(findProjectRoot(deep, {})).toBe(top)
  })

  it('outside a project there is no fallback: not the cwd, not the git top level', () => {
    const top = temp()
    expect(() => findProjectRoot(top, {})).toThrow(NOT_A_PROJECT)
    spawnSync('git', ['init', '-q'], {cwd: top})
    mkdirSync(path.join(top, 'sub'))
    expect(() => projectPaths(path.join(top, 'sub'), {})).toThrow(NOT_A_PROJECT)
  })

  it('an existing DDX_BEAD_DIR is a project (root: the cwd); a missing one is not', () => {
    const top = temp()
    mkdirSync(path.join(top, 'beads'))
    expect(projectPaths(top, {DDX_BEAD_DIR: 'beads'}).file).toBe(path.join(top, 'beads', 'beads.jsonl'))
    expect(() => projectPaths(top, {DDX_BEAD_DIR: 'nope'})).toThrow(NOT_A_PROJECT)
  })

  it('honours DDX_BEAD_DIR for the tracker directory', () => {
    const top = temp()
    mkdirSync(path.join(top, '.ddx'))
    const p = projectPaths(top, {DDX_BEAD_DIR: 'elsewhere'})
    expect(p.file).toBe(path.join(top, 'elsewhere', 'beads.jsonl'))
    expect(p.pidFile).toBe(path.join(top, '.ddx', 'helix.pid'))
  })

  it('tracker init goes to the git top level, else the cwd, else the existing project', () => {
    const top = temp()
    mkdirSync(path.join(top, 'sub'))
    expect(initPaths(path.join(top, 'sub'), {}).root).toBe(path.join(top, 'sub'))
    spawnSync('git', ['init', '-q'], {cwd: top})
    expect(initPaths(path.join(top, 'sub'), {}).root).toBe(top)
    mkdirSync(path.join(top, 'sub', '.ddx'))
    expect(initPaths(path.join(top, 'sub'), {}).root).toBe(path.join(top, 'sub'))
  })
})
