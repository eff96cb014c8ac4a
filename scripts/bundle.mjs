#!/usr/bin/env node
// Part of `npm run build`, after tsc and `oclif manifest` (issues 18 and 19): every
// file the CLI starts from is replaced by an esbuild bundle of itself, so a start
// resolves, reads and compiles a handful of files instead of ~100 modules of helix and
// @oclif/core. Start-up is most of the CPU of the test suite (~700 CLI spawns) and
// of every `helix` call an agent makes.
//
// Entries, each bundled in place (same path, so the oclif manifest's relativePath and
// bin/run.js still find them):
//   dist/cli/fast-path.js     status / tracker ready / tracker status without oclif
//   dist/cli/oclif-entry.js   `execute` from the bundled @oclif/core
//   dist/commands/**/*.js     one per command; oclif imports only the one it runs
//   dist/hooks/*.js           the command_not_found hook
// Code shared by several entries goes to dist/chunks/ (code splitting keeps each
// dynamic import() a chunk of its own, so the parser, zod and the renderers load only
// when a command needs them). The fast path shares no chunk with @oclif/core.
//
// npm packages are bundled too (@oclif/core alone is ~90 files), except the ones
// that find files of their own at run time (pino's transports) and typescript, which
// @oclif/core asks for only in development mode. Whitespace and syntax are minified;
// identifiers are not, so a Bug's stack trace still names real functions.
// The rest of dist/ (tsc's module-per-file output) stays for scripts and stress tests
// that import single modules.
import {build} from 'esbuild'
import {cpSync, readdirSync, rmSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const dist = path.join(root, 'dist')
const tmp = path.join(root, 'dist', '.bundle')

function jsFiles(dir) {
  return readdirSync(path.join(dist, dir), {recursive: true})
    .filter((f) => f.endsWith('.js'))
    .map((f) => path.join(dir, f))
}

const entries = ['cli/fast-path.js', 'cli/oclif-entry.js', ...jsFiles('commands'), ...jsFiles('hooks')]
rmSync(tmp, {recursive: true, force: true})
await build({
  entryPoints: entries.map((e) => ({in: path.join(dist, e), out: e.replace(/\.js$/, '')})),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['typescript', 'pino', 'pino-pretty'],
  outdir: tmp,
  chunkNames: 'chunks/[name]-[hash]',
  minifyWhitespace: true,
  minifySyntax: true,
  // @oclif/core and other CommonJS packages call require() for node builtins
  banner: {js: "import {createRequire as __helixRequire} from 'node:module'; const require = __helixRequire(import.meta.url);"},
  logLevel: 'warning',
})
cpSync(tmp, dist, {recursive: true})
rmSync(tmp, {recursive: true, force: true})
