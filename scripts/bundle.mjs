#!/usr/bin/env node
// Part of `npm run build`, after scripts/transpile.mjs and `oclif manifest` (issues 18 and 19): every
// file the CLI starts from is replaced by an esbuild bundle of itself, so a start
// resolves, reads and compiles a handful of files instead of ~100 modules of helix and
// @oclif/core. Start-up is most of the CPU of the test suite (~700 CLI spawns) and
// of every `helix` call an agent makes.
//
// Entries, each bundled in place (same path, so the oclif manifest's relativePath and
// bin/run.js still find them):
//   dist/cli/fast-path.js     status / tracker ready / show / close without oclif, and
//                             the way to the direct bundles (src/cli/direct.ts)
//   dist/cli/oclif-entry.js   `execute` from the bundled @oclif/core
//   dist/commands/**/*.js     one per command; oclif imports only the one it runs
//   dist/hooks/*.js           the command_not_found hook
// and, not in place, dist/direct/commands/**/*.js: every command but help once more,
// with src/cli/direct-core.ts standing in for @oclif/core, which is how every command
// runs unless oclif must answer (help, --version, typos), plus dist/direct/commands.json,
// the command ids and which take arguments.
// Code shared by several entries goes to dist/chunks/ (dist/fast/ and dist/direct/chunks/
// for the other two builds, below; code splitting keeps each
// dynamic import() a chunk of its own, so the parser and the renderers load only
// when a command needs them). The fast path shares no chunk with @oclif/core.
//
// npm packages are bundled too (@oclif/core alone is ~90 files), except typescript,
// which @oclif/core asks for only in development mode. pino is bundled: its transports
// would look for worker files next to it, but helix writes through a synchronous
// destination and uses none. Whitespace and syntax are minified;
// identifiers are not, so a Bug's stack trace still names real functions.
// The rest of dist/ (the module-per-file output of transpile.mjs) stays for scripts and stress tests
// that import single modules.
import {build} from 'esbuild'
import {cpSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
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

/** A module that stands in for the one at `where` (JS text, evaluated at run time): loaded on first touch. */
function standIn(where, esModule) {
  return `
const {createRequire} = require('node:module')
let real
const load = () => (real ??= require(${where}))
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
}

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
      const contents = standIn(`createRequire(require.resolve('@oclif/core/package.json')).resolve(${JSON.stringify(a.path)})`, esModule)
      return {contents, loader: 'js', resolveDir: OCLIF}
    })
  },
}

// Three builds. The fast path is bundled on its own, with its chunks in dist/fast/: in one
// build with every command its code was cut into ~25 small chunks shared with them in
// different ways, and `status --json` got slower for loading them.
// The direct build (src/cli/direct.ts) bundles every command once more, into
// dist/direct/commands/, with `@oclif/core` itself resolved to src/cli/direct-core.ts:
// oclif's parser, flags, args and errors, and none of its Config, help or plugins.
// Not split: each command is one file holding all it may run (its dynamic imports
// become functions in the same file, run when first called). Split into shared
// chunks, a start loaded ~24 files; one file is cheaper though larger (CPU per start,
// no NODE_EXTRA_CA_CERTS: tracker update 67 → 55 ms, doctor 60 → 42 ms, run --dry-run
// 111 → 100 ms) and dist/direct/ is ~9 MB instead of ~1.5 MB.
const directCore = {
  name: 'direct-core',
  setup(b) {
    b.onResolve({filter: /^@oclif\/core$/}, () => ({path: path.join(dist, 'cli', 'direct-core.js')}))
  },
}
// ...and the parts of oclif that those reach only for help, error pretty-printing or
// debug output get stand-ins too, which load the real file from node_modules when
// first touched (importer, relative to @oclif/core, and what it requires)
const LAZY_PARTS = [
  ['lib/flags.js', './help'],
  ['lib/errors/index.js', './handle'],
  ['lib/parser/help.js', '../ux'],
  ['lib/parser/parse.js', '../logger'],
  ['lib/errors/error.js', '../logger'],
  ['lib/errors/error.js', './errors/pretty-print'],
  ['lib/errors/errors/cli.js', '../../ux/theme'],
  ['lib/parser/errors.js', '../ux/theme'],
]
const lazyOclifParts = {
  name: 'lazy-oclif-parts',
  setup(b) {
    b.onResolve({filter: /^\.\.?\//}, (a) => {
      const importer = path.relative(OCLIF, a.importer).split(path.sep).join('/')
      if (!LAZY_PARTS.some(([i, spec]) => i === importer && spec === a.path)) return undefined
      const file = path.relative(OCLIF, oclifRequire.resolve(path.resolve(path.dirname(a.importer), a.path))).split(path.sep).join('/')
      return {path: file, namespace: 'lazy-oclif-part'}
    })
    b.onLoad({filter: /.*/, namespace: 'lazy-oclif-part'}, (a) => ({contents: standIn(`require('node:path').join(require('node:path').dirname(require.resolve('@oclif/core/package.json')), ${JSON.stringify(a.path)})`, Boolean(oclifRequire(path.join(OCLIF, a.path)).__esModule)), loader: 'js', resolveDir: OCLIF}))
  },
}
const commands = jsFiles('commands')
// what src/cli/direct.ts never runs directly gets no direct bundle (transpiled just above)
const {OCLIF_ONLY} = await import(path.join(dist, 'cli', 'direct.js'))
const directCommands = commands.filter((c) => !OCLIF_ONLY.has(path.relative('commands', c).replace(/\.js$/, '').split(path.sep).join(':')))
const builds = [
  {entries: ['cli/fast-path.js'], chunks: 'fast/[name]-[hash]', plugins: []},
  {entries: ['cli/oclif-entry.js', ...commands, ...jsFiles('hooks')], chunks: 'chunks/[name]-[hash]', plugins: [lazyOclifDeps]},
  {entries: directCommands, out: (e) => path.join('direct', e), chunks: 'direct/chunks/[name]-[hash]', splitting: false, plugins: [directCore, lazyOclifDeps, lazyOclifParts]},
]
rmSync(tmp, {recursive: true, force: true})
for (const b of builds) {
  await build({
    entryPoints: b.entries.map((e) => ({in: path.join(dist, e), out: (b.out ? b.out(e) : e).replace(/\.js$/, '')})),
    bundle: true,
    splitting: b.splitting ?? true,
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
// what src/cli/direct.ts needs to find a command id as oclif would: each command of the
// manifest, and whether it takes arguments (or is not strict)
const manifest = JSON.parse(readFileSync(path.join(root, 'oclif.manifest.json'), 'utf8'))
const table = Object.fromEntries(Object.values(manifest.commands).map((c) => [c.id, {args: c.strict === false || Object.keys(c.args ?? {}).length > 0}]))
writeFileSync(path.join(tmp, 'direct', 'commands.json'), JSON.stringify(table) + '\n')
cpSync(tmp, dist, {recursive: true})
rmSync(tmp, {recursive: true, force: true})
