/**
 * `refs/helix/state` (SPEC 20.5): the failure bookkeeping of `--land pr` runs, which
 * cannot go to a protected base. The ref points at a commit whose tree holds one
 * file, `overlay.jsonl`: one JSON object per bead, its id plus only the fields helix
 * changed (notes, attempt count, retry-after, labels, spend; a bead filed by helix
 * whole). Updated by compare-and-set push (`--force-with-lease=refs/helix/state:<old>`),
 * read by every host and laid over the tracker at the base tip. A bead's entry is
 * dropped once the bead is closed at the base.
 */
import {mkdtemp, rm, writeFile, mkdir} from 'node:fs/promises'
import path from 'node:path'
import {firstLine, git, gitEnv} from '../git/run.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {openRepo} from '../git/repo.js'
import {HelixError} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'

export const STATE_REF = 'refs/helix/state'
const FILE = 'overlay.jsonl'
/** set on an entry that is a whole bead helix filed (not yet on the base) */
export const NEW_MARK = 'helix-new'

export type Overlay = Map<string, Record<string, unknown>>

export interface StateRefOptions {
  cwd: string
  remote: string
  env: NodeJS.ProcessEnv
  scratch: string
}

export interface StateRef {
  /** the overlay on the remote now; null when the remote did not answer */
  read(): Promise<{sha: string | null; overlay: Overlay} | null>
  /** compare-and-set: `change` gets the current overlay and returns the next (null: no change); 'unreachable' when the remote is away */
  update(change: (o: Overlay) => Overlay | null | Promise<Overlay | null>): Promise<'pushed' | 'unchanged' | 'unreachable'>
}

export function parseOverlay(text: string): Overlay {
  const out: Overlay = new Map()
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    try {
      const v: unknown = JSON.parse(line)
      if (v && typeof v === 'object' && !Array.isArray(v) && typeof (v as Record<string, unknown>).id === 'string') out.set((v as {id: string}).id, v as Record<string, unknown>)
    } catch {
      // a line that is not ours to read: skipped, never guessed at
    }
  }
  return out
}

export const serializeOverlay = (o: Overlay): string => [...o.values()].map((e) => JSON.stringify(e)).join('\n') + (o.size ? '\n' : '')

/**
 * The tracker view: `snap` (the base tip) with the overlay laid over it, in place.
 * Entries of beads closed at the base are left out (and listed in `stale`, to drop).
 */
export function applyOverlay(snap: TrackerSnapshot, o: Overlay): {stale: string[]} {
  const stale: string[] = []
  for (const [id, e] of o) {
    const b = snap.byId.get(id)
    if (b && b.status === 'closed') {
      stale.push(id)
      continue
    }
    const {id: _id, [NEW_MARK]: isNew, ...fields} = e
    void _id
    if (b) Object.assign(b, fields)
    else if (isNew === true) {
      const nb = {id, ...fields} as Bead
      snap.beads.push(nb)
      snap.byId.set(id, nb)
    }
  }
  return {stale}
}

/** the overlay entries that turn `before` into `after` (whole beads for new ones), merged into `o` */
export function diffIntoOverlay(o: Overlay, before: TrackerSnapshot, after: TrackerSnapshot, onBase: Set<string>): Overlay {
  const next: Overlay = new Map([...o].map(([k, v]) => [k, {...v}]))
  for (const b of after.beads) {
    const was = before.byId.get(b.id)
    if (!was) {
      next.set(b.id, {...(b as Record<string, unknown>), id: b.id, ...(onBase.has(b.id) ? {} : {[NEW_MARK]: true})})
      continue
    }
    const changed: Record<string, unknown> = {}
    for (const k of Object.keys(b)) if (JSON.stringify((b as Record<string, unknown>)[k]) !== JSON.stringify((was as Record<string, unknown>)[k])) changed[k] = (b as Record<string, unknown>)[k]
    if (Object.keys(changed).length > 0) next.set(b.id, {...(next.get(b.id) ?? {id: b.id}), ...changed})
  }
  return next
}

export function createStateRef(o: StateRefOptions): StateRef {
  const env = gitEnv(o.env, {name: 'helix', email: 'helix@localhost'})
  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) => git(args, {cwd: o.cwd, env: {...env, ...extra}})

  async function read(): Promise<{sha: string | null; overlay: Overlay} | null> {
    const ls = await run(['ls-remote', o.remote, STATE_REF])
    if (ls.code !== 0) return null
    const sha = ls.stdout.split('\n').map((l) => l.split('\t')).find((p) => p[1] === STATE_REF)?.[0] ?? null
    if (!sha) return {sha: null, overlay: new Map()}
    if ((await run(['cat-file', '-e', `${sha}^{commit}`])).code !== 0) {
      const f = await run(['fetch', '-q', '--no-tags', '--no-write-fetch-head', o.remote, STATE_REF])
      if (f.code !== 0) return null
    }
    const blob = await run(['cat-file', 'blob', `${sha}:${FILE}`])
    return {sha, overlay: blob.code === 0 ? parseOverlay(blob.stdout) : new Map()}
  }

  async function commit(parent: string | null, text: string): Promise<string> {
    await mkdir(o.scratch, {recursive: true})
    const dir = await mkdtemp(path.join(o.scratch, 'state-'))
    try {
      await writeFile(path.join(dir, FILE), text)
      const blob = await run(['hash-object', '-w', path.join(dir, FILE)])
      if (blob.code !== 0) throw new Error(`git hash-object: ${firstLine(blob)}`)
      const idx = {GIT_INDEX_FILE: path.join(dir, 'index')}
      const add = await run(['update-index', '--add', '--cacheinfo', `100644,${blob.stdout.trim()},${FILE}`], idx)
      if (add.code !== 0) throw new Error(`git update-index: ${firstLine(add)}`)
      const tree = await run(['write-tree'], idx)
      if (tree.code !== 0) throw new Error(`git write-tree: ${firstLine(tree)}`)
      const c = await run(['commit-tree', ...(parent ? ['-p', parent] : []), '-m', `helix: failure bookkeeping (${new Date().toISOString()})`, tree.stdout.trim()])
      if (c.code !== 0) throw new Error(`git commit-tree: ${firstLine(c)}`)
      return c.stdout.trim()
    } finally {
      await rm(dir, {recursive: true, force: true})
    }
  }

  async function update(change: (o: Overlay) => Overlay | null | Promise<Overlay | null>): Promise<'pushed' | 'unchanged' | 'unreachable'> {
    // a lost compare-and-set is a race (SPEC 20.1): read again and retry, with jitter
    for (let round = 0; ; round++) {
      const cur = await read()
      if (!cur) return 'unreachable'
      const next = await change(cur.overlay)
      if (!next || serializeOverlay(next) === serializeOverlay(cur.overlay)) return 'unchanged'
      const sha = await commit(cur.sha, serializeOverlay(next))
      const p = await openRepo(o.cwd, env).push([`--force-with-lease=${STATE_REF}:${cur.sha ?? ''}`, o.remote, `${sha}:${STATE_REF}`], {hooks: false})
      if (p.ok) return 'pushed'
      if (p.kind === 'unreachable') return 'unreachable'
      // the remote's rule (a hook that refuses refs/helix/*) is said in its words, never as a bug
      if (p.kind === 'rejected') throw new HelixError(`the remote ${sanitize(o.remote)} refused helix's push of ${STATE_REF}: ${sanitize(p.message)}`)
      if (p.kind !== 'race' || round > 50) throw new Error(`git push of ${STATE_REF}: ${p.message}`)
      await new Promise((r) => setTimeout(r, 50 + Math.floor(Math.random() * 200)))
    }
  }

  return {read, update}
}
