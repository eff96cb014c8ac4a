// The demo's "build when needed" rule, on a fake repository layout (no real build).
import {mkdirSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterEach, describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'

const DEMO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'demo.mjs')
const loadDemo = async (): Promise<{buildReason: (repo: string) => string | null}> => import(DEMO)

const temps: string[] = []
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, {recursive: true, force: true})
})

function repo(files: Record<string, number>): string {
  const dir = makeTempDir('helix-demo-build-')
  temps.push(dir)
  for (const [rel, mtimeSec] of Object.entries(files)) {
    const file = path.join(dir, rel)
    mkdirSync(path.dirname(file), {recursive: true})
    writeFileSync(file, '')
    utimesSync(file, mtimeSec, mtimeSec)
  }
  return dir
}

describe('demo build check', () => {
  it('asks for a build when dist/ or the manifest is missing', async () => {
    const {buildReason} = await loadDemo()
    expect(buildReason(repo({'src/a.ts': 100}))).toBe('no build yet')
    expect(buildReason(repo({'src/a.ts': 100, 'dist/a.js': 200}))).toBe('no build yet')
    expect(buildReason(repo({'src/a.ts': 100, 'oclif.manifest.json': 200}))).toBe('no build yet')
  })

  it('asks for a build when any file under src/ is newer than the manifest', async () => {
    const {buildReason} = await loadDemo()
    expect(buildReason(repo({'src/a.ts': 100, 'src/deep/b.ts': 300, 'dist/a.js': 200, 'oclif.manifest.json': 200}))).toBe(
      'src/ changed since the last build',
    )
  })

  it('does not rebuild an up-to-date checkout, nor an installed package without src/', async () => {
    const {buildReason} = await loadDemo()
    expect(buildReason(repo({'src/a.ts': 100, 'src/deep/b.ts': 150, 'dist/a.js': 200, 'oclif.manifest.json': 200}))).toBeNull()
    expect(buildReason(repo({'dist/a.js': 200, 'oclif.manifest.json': 200}))).toBeNull()
  })
})
