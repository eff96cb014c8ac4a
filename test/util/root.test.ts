import {mkdirSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {findProjectRoot, projectPaths} from '../../src/util/root.js'
import {makeTempDir} from '../support/tmp.js'

describe('project root discovery', () => {
  it('finds the nearest ancestor holding .ddx/', () => {
    const top = makeTempDir('helix-root-')
    mkdirSync(path.join(top, '.ddx'))
    const deep = path.join(top, 'a', 'b', 'c')
    mkdirSync(deep, {recursive: true})
    expect(findProjectRoot(deep)).toBe(top)
  })

  it('falls back to the directory itself outside git and .ddx', () => {
    const top = makeTempDir('helix-root-')
    expect(findProjectRoot(top)).toBe(top)
  })

  it('honours DDX_BEAD_DIR for the tracker directory', () => {
    const top = makeTempDir('helix-root-')
    mkdirSync(path.join(top, '.ddx'))
    const p = projectPaths(top, {DDX_BEAD_DIR: 'elsewhere'})
    expect(p.file).toBe(path.join(top, 'elsewhere', 'beads.jsonl'))
    expect(p.pidFile).toBe(path.join(top, '.ddx', 'helix.pid'))
  })
})
