#!/usr/bin/env node
// The first step of `npm run build`: every src/**/*.ts becomes dist/**/*.js, one module
// per file, by esbuild, in well under a second. tsc took ~6 s of wall time here, and
// `npm test` waited for it before running a single test. esbuild only strips
// types, so the type check is `npm run typecheck`, run by `npm run lint` and by `.ci/run`.
// Every module is transpiled alone: src/ uses no const enum or other construct that
// needs the whole program (tsconfig.check.json sets isolatedModules, so tsc says so).
import {build} from 'esbuild'
import {readdirSync, rmSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const src = path.join(root, 'src')
const dist = path.join(root, 'dist')

const entryPoints = readdirSync(src, {recursive: true})
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => path.join(src, f))

rmSync(dist, {recursive: true, force: true})
await build({
  entryPoints,
  outdir: dist,
  outbase: src,
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: path.join(root, 'tsconfig.json'),
  logLevel: 'warning',
})
