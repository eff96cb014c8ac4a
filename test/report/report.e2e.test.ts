import {existsSync, readdirSync, rmSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {helix, project} from '../operator/helpers.js'
import {makeTempDir} from '../support/tmp.js'

const dirs: string[] = []
afterEach(() => {
  while (dirs.length) rmSync(dirs.pop()!, {recursive: true, force: true})
})

function proj(): string {
  const root = project({beads: []})
  dirs.push(root)
  return root
}


// The text, JSON, page and each refusal: report-cli.test.ts (in-process). Here the same command
// as a shell runs it: an exit 0 and an exit 1.
describe('helix report (built CLI)', () => {
  it('no history yet: says nothing ran, exit 0', () => {
    const root = proj()
    const r = helix(root, ['report'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/nothing ran in this window/)
    expect(existsSync(path.join(root, '.helix-logs'))).toBe(false)
  })

  it('outside a project: the one-line refusal, exit 1, nothing written', () => {
    const dir = makeTempDir('helix-noproj-')
    dirs.push(dir)
    const r = helix(dir, ['report', '--html', path.join(dir, 'r.html')])
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("helix: not a helix project (no .ddx/ here or above); run 'helix tracker init' at the project root\n")
    expect(readdirSync(dir)).toEqual([])
  })
})
