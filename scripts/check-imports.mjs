#!/usr/bin/env node
// The layer rule of docs/architecture.md, checked: every import in src/
// points down the layer table below, the loop engine imports no `node:` module,
// and no two modules of src/ import each other through any chain (no cycles).
//
// A regex scan of static `import … from`, `export … from` and `import('…')` is
// enough here: helix source has no other way to load a module. Type-only imports
// count like any other, for the layers and for cycles: the compiler erases them,
// but two modules that name each other's types are still one knot to read and change.
//
// Usage: node scripts/check-imports.mjs [--graph]   (exit 1 on any breach)
import {readdirSync, readFileSync, statSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const srcDir = path.resolve(root, process.env.HELIX_CHECK_SRC ?? 'src')

// Layers, top to bottom. A module may import its own folder and any folder in a
// LOWER layer; never a folder in its own layer (other than itself) or above.
// Keep in step with the diagram in docs/architecture.md ("Layers").
export const LAYERS = [
  {name: 'commands', folders: ['commands', 'hooks']},
  {name: 'cli glue', folders: ['cli']},
  {name: 'dashboard', folders: ['dashboard']},
  {name: 'app wiring', folders: ['app']},
  {name: 'landing', folders: ['landing']},
  {name: 'report', folders: ['report']},
  {name: 'operator surface and loop adapters', folders: ['operator', 'output']},
  {name: 'remote', folders: ['remote']},
  {name: 'loop engine', folders: ['loop']},
  {name: 'agents, recovery and the forge', folders: ['agents', 'recovery', 'forge']},
  {name: 'tracker and git', folders: ['tracker', 'git']},
  {name: 'state and config', folders: ['state', 'config']},
  {name: 'proc', folders: ['proc']},
  {name: 'util', folders: ['util']},
]

// Folders whose modules may not import any `node:` module.
const NO_NODE = new Set(['loop'])
// Folders that must not import oclif (everything but the command layer).
const OCLIF_OK = new Set(['commands', 'hooks', 'cli'])

function walk(dir) {
  const out = []
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) out.push(...walk(full))
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(full)
  }
  return out
}

// `import type …` / `export type …` are erased by the compiler, yet they couple two
// modules as much as a value does: they count for the layer rule and for cycles.
const IMPORT_RE = /(?:^|\n)\s*(import|export)(\s+type)?\s[^'"`;]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g

function importsOf(text) {
  const specs = []
  // Drop comments so an example in a comment is not an import.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1')
  for (const m of code.matchAll(IMPORT_RE)) specs.push(m[3] ?? m[4] ?? m[5])
  return specs
}

const folderOf = (rel) => (rel.includes('/') ? rel.slice(0, rel.indexOf('/')) : '.')
const layerIndex = new Map()
LAYERS.forEach((layer, i) => layer.folders.forEach((f) => layerIndex.set(f, i)))

export function checkImports(dir = srcDir) {
  const files = walk(dir).map((f) => path.relative(dir, f).split(path.sep).join('/'))
  const known = new Set(files)
  const graph = new Map()
  const problems = []
  for (const rel of files) {
    const from = folderOf(rel)
    const edges = []
    for (const spec of importsOf(readFileSync(path.join(dir, rel), 'utf8'))) {
      if (spec.startsWith('node:')) {
        if (NO_NODE.has(from)) problems.push(`${rel}: imports ${spec} (the loop engine imports no node: module; put the effect in src/app/ behind a port)`)
        continue
      }
      if (spec === '@oclif/core' || spec.startsWith('@oclif/')) {
        if (!OCLIF_OK.has(from)) problems.push(`${rel}: imports ${spec} (only commands/ and cli/ talk to oclif)`)
        continue
      }
      if (!spec.startsWith('.')) continue
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(rel), spec)).replace(/\.js$/, '.ts')
      if (!known.has(target)) {
        problems.push(`${rel}: imports ${spec}, which is not a module in src/`)
        continue
      }
      edges.push(target)
      const to = folderOf(target)
      if (to === from) continue
      const li = layerIndex.get(from)
      const lj = layerIndex.get(to)
      if (li === undefined) problems.push(`${rel}: folder src/${from}/ is in no layer (add it to LAYERS in scripts/check-imports.mjs and to docs/architecture.md)`)
      else if (lj === undefined) problems.push(`${rel}: imports ${target}, whose folder src/${to}/ is in no layer`)
      else if (lj <= li) {
        const why = lj === li ? `same layer "${LAYERS[li].name}"` : `"${LAYERS[lj].name}" is above "${LAYERS[li].name}"`
        problems.push(`${rel}: imports ${target} — layer breach (${why})`)
      }
    }
    graph.set(rel, edges)
  }
  for (const cycle of findCycles(graph)) problems.push(`import cycle: ${cycle.join(' → ')}`)
  return {files, graph, problems}
}

// Tarjan's strongly connected components; every component of more than one
// module (or a module importing itself) is a cycle. One example path per component.
function findCycles(graph) {
  let index = 0
  const idx = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const out = []
  const strong = (v) => {
    idx.set(v, index)
    low.set(v, index)
    index++
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!idx.has(w)) {
        strong(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const comp = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        comp.push(w)
      } while (w !== v)
      if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(examplePath(graph, new Set(comp), comp.sort()[0]))
    }
  }
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) strong(v)
  return out
}

// A shortest path start → … → start inside one component, to print.
function examplePath(graph, comp, start) {
  const prev = new Map()
  const queue = [start]
  const seen = new Set([start])
  while (queue.length > 0) {
    const v = queue.shift()
    for (const w of graph.get(v) ?? []) {
      if (!comp.has(w)) continue
      if (w === start) {
        const chain = [v]
        while (chain[0] !== start) chain.unshift(prev.get(chain[0]))
        return [...chain, start]
      }
      if (!seen.has(w)) {
        seen.add(w)
        prev.set(w, v)
        queue.push(w)
      }
    }
  }
  return [start, start]
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const {files, graph, problems} = checkImports()
  if (process.argv.includes('--graph')) {
    const folders = new Map()
    for (const [from, tos] of graph) {
      for (const to of tos) {
        const a = folderOf(from)
        const b = folderOf(to)
        if (a === b) continue
        if (!folders.has(a)) folders.set(a, new Set())
        folders.get(a).add(b)
      }
    }
    for (const [a, bs] of [...folders].sort()) console.log(`${a} → ${[...bs].sort().join(', ')}`)
  }
  if (problems.length > 0) {
    for (const p of problems) console.error(`check-imports: ${p}`)
    console.error(`check-imports: ${problems.length} problem(s) in ${files.length} modules of src/ (layers: docs/architecture.md)`)
    process.exit(1)
  }
  console.log(`check-imports: ${files.length} modules, layers one-way, no cycles, loop engine free of node:`)
}
