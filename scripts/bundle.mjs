#!/usr/bin/env node
// Part of `npm run build`, after scripts/transpile.mjs and `oclif manifest` (issues 18 and 19): every
// file the CLI starts from is replaced by an esbuild bundle of itself, so a start
// resolves, reads and compiles a handful of files instead of ~100 modules of helix and
// @oclif/core. Start-up is most of the CPU of the test suite and of every `helix` call
// an agent makes.
//
// Entries, each bundled in place (same path, so the oclif manifest's relativePath and
// bin/run.js still find them):
//   dist/cli/fast-path.js     status / tracker show / close <id> without oclif
//   dist/cli/oclif-entry.js   `execute` from the bundled @oclif/core
//   dist/commands/**/*.js     one per command; oclif imports only the one it runs (the
//                             manifest says which file), so a new command needs nothing here
//   dist/hooks/*.js           the command_not_found hook
// Code shared by several entries goes to dist/chunks/ (dist/fast/ for the fast path, a
// build of its own: in one build with every command its code was cut into ~25 small
// chunks shared with them, and `status --json` got slower for loading them). Code
// splitting keeps each dynamic import() a chunk of its own, so the parser and the
// renderers load only when a command needs them.
//
// npm packages are bundled too (@oclif/core alone is ~90 files), except typescript,
// which @oclif/core asks for only in development mode. pino is bundled: its transports
// would look for worker files next to it, but helix writes through a synchronous
// destination and uses none. Whitespace and syntax are minified;
// identifiers are not, so an internal error's stack trace still names real functions.
// The rest of dist/ (the module-per-file output of transpile.mjs) stays for scripts and stress tests
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

const builds = [
  {entries: ['cli/fast-path.js'], chunks: 'fast/[name]-[hash]'},
  {entries: ['cli/oclif-entry.js', ...jsFiles('commands'), ...jsFiles('hooks')], chunks: 'chunks/[name]-[hash]'},
]
rmSync(tmp, {recursive: true, force: true})
for (const b of builds) {
  await build({
    entryPoints: b.entries.map((e) => ({in: path.join(dist, e), out: e.replace(/\.js$/, '')})),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: ['typescript'],
    outdir: tmp,
    chunkNames: b.chunks,
    minifyWhitespace: true,
    minifySyntax: true,
    // @oclif/core and other CommonJS packages call require() for node builtins
    banner: {js: "import {createRequire as __helixRequire} from 'node:module'; const require = __helixRequire(import.meta.url);"},
    logLevel: 'warning',
  })
}
cpSync(tmp, dist, {recursive: true})
rmSync(tmp, {recursive: true, force: true})
