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
// Code shared by several entries goes to dist/chunks/ (dist/fast/ for the fast path's
// own build, below; code splitting keeps each
// dynamic import() a chunk of its own, so the parser, zod and the renderers load only
// when a command needs them). The fast path shares no chunk with @oclif/core.
//
// npm packages are bundled too (@oclif/core alone is ~90 files), except typescript,
// which @oclif/core asks for only in development mode. pino is bundled: its transports
// would look for worker files next to it, but helix writes through a synchronous
// destination and uses none. Whitespace and syntax are minified;
// identifiers are not, so a Bug's stack trace still names real functions.
// The rest of dist/ (tsc's module-per-file output) stays for scripts and stress tests
// that import single modules.
import {build} from 'esbuild'
import {cpSync, readdirSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
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

// Packages @oclif/core requires when it loads but a command uses rarely or never: help
// rendering, error pretty-printing, spinners, plugin discovery, the engine check
// (which already fails harmlessly in a bundle: it reads __dirname). Each require of
// one from @oclif/core gets a stand-in that loads the real package from node_modules,
// resolved from @oclif/core as oclif itself would, the first time it is touched.
// Neither compiled nor run on a start that does not need them: oclif's load went from
// ~31 to ~19 ms here.
const LAZY = ['semver', 'tinyglobby', 'minimatch', 'ejs', 'cli-spinners', 'lilconfig', 'get-package-type', 'wrap-ansi', 'string-width', 'widest-line', 'indent-string', 'clean-stack']
const OCLIF = path.dirname(createRequire(import.meta.url).resolve('@oclif/core/package.json'))
const oclifRequire = createRequire(path.join(OCLIF, 'package.json'))
const packageOf = (spec) => spec.split('/').slice(0, spec.startsWith('@') ? 2 : 1).join('/')

const lazyOclifDeps = {
  name: 'lazy-oclif-deps',
  setup(b) {
    b.onResolve({filter: /^[^./]/}, (a) => {
      if (a.kind !== 'require-call' || !a.importer.startsWith(OCLIF + path.sep) || !LAZY.includes(packageOf(a.path))) return undefined
      return {path: a.path, namespace: 'lazy-oclif-dep'}
    })
    b.onLoad({filter: /.*/, namespace: 'lazy-oclif-dep'}, (a) => {
      // __importDefault asks for __esModule at once: answer it without loading
      const esModule = Boolean(oclifRequire(a.path).__esModule)
      const contents = `
const {createRequire} = require('node:module')
let real
const load = () => (real ??= createRequire(require.resolve('@oclif/core/package.json'))(${JSON.stringify(a.path)}))
module.exports = new Proxy(() => {}, {
  get: (_, k) => (k === '__esModule' ? ${esModule} : load()[k]),
  apply: (_, self, args) => Reflect.apply(load(), self, args),
  has: (_, k) => k in load(),
  ownKeys: () => Reflect.ownKeys(load()),
  getOwnPropertyDescriptor: (_, k) => {
    const d = Reflect.getOwnPropertyDescriptor(load(), k)
    return d && {...d, configurable: true}
  },
})`
      return {contents, loader: 'js', resolveDir: OCLIF}
    })
  },
}

// Two builds. The fast path is bundled on its own, with its chunks in dist/fast/: in one
// build with every command its code was cut into ~25 small chunks shared with them in
// different ways, and `status --json` got slower for loading them.
const builds = [
  {entries: ['cli/fast-path.js'], chunks: 'fast/[name]-[hash]', plugins: []},
  {entries: ['cli/oclif-entry.js', ...jsFiles('commands'), ...jsFiles('hooks')], chunks: 'chunks/[name]-[hash]', plugins: [lazyOclifDeps]},
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
    plugins: b.plugins,
    logLevel: 'warning',
  })
}
cpSync(tmp, dist, {recursive: true})
rmSync(tmp, {recursive: true, force: true})
