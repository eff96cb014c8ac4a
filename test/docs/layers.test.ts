import {spawnSync} from 'node:child_process'
import {appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'

// The layer rule (issue 19): docs/architecture.md draws the layers, scripts/check-imports.mjs
// enforces them in `npm run lint`. These tests keep the two in step and show the rule bites.
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const script = path.join(repo, 'scripts', 'check-imports.mjs')

function check(src?: string) {
  const r = spawnSync(process.execPath, [script], {encoding: 'utf8', env: {...process.env, ...(src ? {HELIX_CHECK_SRC: src} : {})}})
  return {code: r.status, out: `${r.stdout}${r.stderr}`}
}

/** the folder rows of the drawing: each row's folders, top to bottom */
function drawnLayers(): string[][] {
  const text = readFileSync(path.join(repo, 'docs', 'architecture.md'), 'utf8')
  const start = text.indexOf('<!-- layers:')
  const block = text.slice(text.indexOf('```', start) + 3, text.indexOf('```', text.indexOf('```', start) + 3))
  return block
    .split('\n')
    .map((l) => /^ ([a-z]+(?:, [a-z]+)*) {2,}/.exec(l)?.[1])
    .filter((x): x is string => x !== undefined)
    .map((x) => x.split(', '))
}

function project(files: Record<string, string>): string {
  const src = path.join(makeTempDir('helix-layers-'), 'src')
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(src, rel)), {recursive: true})
    writeFileSync(path.join(src, rel), body)
  }
  return src
}

describe('layers (docs/architecture.md ↔ scripts/check-imports.mjs)', () => {
  it('the drawing and the rule list the same layers in the same order', async () => {
    const {LAYERS} = (await import(script)) as {LAYERS: Array<{folders: string[]}>}
    expect(drawnLayers()).toEqual(LAYERS.map((l) => l.folders))
  })

  it('src/ as it is passes', () => {
    const r = check()
    expect(r.out).toMatch(/layers one-way, no cycles, loop engine free of node:/)
    expect(r.code).toBe(0)
  })

  it('fails on an upward import, node: in the loop engine, oclif in the domain and a cycle', () => {
    const src = project({
      'util/a.ts': "export const a = 1\n",
      'app/wiring.ts': "export const w = 1\n",
      'loop/engine.ts': "import {readFile} from 'node:fs/promises'\nimport {w} from '../app/wiring.js'\nexport const e = [readFile, w]\n",
      'tracker/x.ts': "import {y} from './y.js'\nexport const x = y\n",
      'tracker/y.ts': "import {x} from './x.js'\nimport {Command} from '@oclif/core'\nexport const y = [x, Command]\n",
    })
    const r = check(src)
    expect(r.code).toBe(1)
    expect(r.out).toContain('loop/engine.ts: imports node:fs/promises')
    expect(r.out).toContain('loop/engine.ts: imports app/wiring.ts — layer breach ("app wiring" is above "loop engine")')
    expect(r.out).toContain('tracker/y.ts: imports @oclif/core')
    expect(r.out).toMatch(/import cycle: tracker\/x\.ts → tracker\/y\.ts → tracker\/x\.ts/)
    expect(r.out).toContain('4 problem(s)')
  })

  it('counts a cycle made of type-only imports (issue 30: the compiler erases them, the knot stays)', () => {
    const files = {
      'state/q.ts': "import {p} from './p.js'\nexport type Q = number\nexport const q = p\n",
      'state/p.ts': "export type P = number\nexport const p = 1\n",
    }
    // without the back edge: no cycle, the tree passes
    const clean = check(project(files))
    expect(clean.out).toMatch(/2 modules, layers one-way, no cycles/)
    expect(clean.code).toBe(0)
    // p names Q by `import type` and q imports p: a cycle all the same
    const typeOnly = check(project({...files, 'state/p.ts': "import type {Q} from './q.js'\nexport type P = Q\nexport const p = 1\n"}))
    expect(typeOnly.code).toBe(1)
    expect(typeOnly.out).toMatch(/import cycle: state\/p\.ts → state\/q\.ts → state\/p\.ts/)
    // `export type … from` is an edge too
    const reexport = check(project({...files, 'state/p.ts': "export type {Q} from './q.js'\nexport const p = 1\n"}))
    expect(reexport.code).toBe(1)
    expect(reexport.out).toMatch(/import cycle: state\/p\.ts → state\/q\.ts → state\/p\.ts/)
  })

  it('fails on a cycle with no value edge at all: inline `type` specifiers, a multi-line `import type`, an `export type … from`', () => {
    const files = {
      'loop/a.ts': "import {type B} from './b.js'\nexport interface A {b: B}\n",
      'loop/b.ts': "import type {\n  C,\n} from './c.js'\nexport interface B {c: C}\n",
      'loop/c.ts': "export interface C {n: number}\n",
    }
    const clean = check(project(files))
    expect(clean.out).toMatch(/3 modules, layers one-way, no cycles/)
    expect(clean.code).toBe(0)
    const knot = check(project({...files, 'loop/c.ts': "export type {A as CA} from './a.js'\nexport interface C {n: number}\n"}))
    expect(knot.code).toBe(1)
    expect(knot.out).toMatch(/import cycle: loop\/a\.ts → loop\/b\.ts → loop\/c\.ts → loop\/a\.ts/)
    expect(knot.out).toContain('1 problem(s)')
  })

  it('fails on the real src/ with the knot RunScope broke tied again (scope.ts naming Run by `import type`)', () => {
    const src = path.join(makeTempDir('helix-layers-'), 'src')
    cpSync(path.join(repo, 'src'), src, {recursive: true})
    expect(check(src).code).toBe(0)
    // run.ts imports scope.ts (Run implements RunScope) and the scheduler; scope.ts naming Run closes the loop
    appendFileSync(path.join(src, 'loop', 'scope.ts'), "\nimport type {Run} from './run.js'\nexport type RunOf = Run\n")
    const r = check(src)
    expect(r.code).toBe(1)
    expect(r.out).toMatch(/import cycle: [^\n]*loop\/scope\.ts/)
    expect(r.out).toMatch(/import cycle: [^\n]*loop\/run\.ts/)
  })
})
