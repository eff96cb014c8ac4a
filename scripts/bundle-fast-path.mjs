#!/usr/bin/env node
// Part of `npm run build` (issue 18): the startup fast path (src/cli/fast-path.ts and
// what `status`, `tracker ready` and `tracker status` import) as a few bundled files in
// dist/fast/, so `helix status --json` resolves, reads and links ~5 modules instead of
// ~21. Code splitting keeps each dynamic import() a separate chunk: the parser, the text
// renderer and the process scans load only when a run needs them. npm packages stay
// external (imported from node_modules as usual). bin/run.js falls back to
// dist/cli/fast-path.js when dist/fast/ is missing.
import {build} from 'esbuild'
import {rmSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const outdir = path.join(root, 'dist', 'fast')
rmSync(outdir, {recursive: true, force: true})
await build({
  entryPoints: [path.join(root, 'dist', 'cli', 'fast-path.js')],
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  outdir,
  logLevel: 'warning',
})
