/**
 * The queue on the remote's base branch (SPEC 19.1): fetch `<name>/<base>`, read
 * `.ddx/beads.jsonl` at its tip, and write tracker changes as commits pushed to
 * the base by fast-forward. Commits are built with plumbing on a private index
 * (`read-tree`, `update-index`, `write-tree`, `commit-tree`), so no checkout is
 * touched; a non-fast-forward means fetch and apply again. Never a forced push.
 */
import {mkdtemp, readFile, rm, writeFile, mkdir} from 'node:fs/promises'
import path from 'node:path'
import {firstLine, git, gitEnv, type GitResult} from '../git/run.js'
import type {ProjectPaths} from '../util/root.js'
import {push, refLine, type PushResult} from './push.js'

export interface RemoteBaseOptions {
  /** the project root (inside the local repository) */
  root: string
  remote: string
  base: string
  /** the tracker file relative to the repository top, e.g. `.ddx/beads.jsonl` */
  trackerRel: string
  env: NodeJS.ProcessEnv
  /** scratch space for tracker edits (inside .git/) */
  scratch: string
}

export interface RemoteBase {
  readonly trackingRef: string
  /** `git fetch <remote> <base>`; the new tip, or null when the remote did not answer */
  fetch(): Promise<string | null>
  /** the last fetched tip (local remote-tracking ref), null before any */
  tip(): Promise<string | null>
  /** the tracker text at a commit ('' when the file is absent there) */
  trackerAt(commit: string): Promise<string>
  /**
   * Apply `edit` to the tracker at the fresh tip and push the result as one commit
   * (fast-forward). `edit` gets a scratch project whose `.ddx/beads.jsonl` is the
   * tip's; it may run several times (a race lost). Returns 'pushed', 'unchanged',
   * or 'unreachable'.
   */
  commitTracker(message: string, edit: (paths: ProjectPaths) => Promise<void>): Promise<'pushed' | 'unchanged' | 'unreachable'>
  /** a commit on `parent` whose tracker file is `text` (plumbing, no hooks: helix's own bookkeeping) */
  trackerCommit(parent: string, text: string, message: string): Promise<string>
  /** fast-forward the local base when it is checked out in the root, clean and behind (18.3a) */
  fastForwardLocal(): Promise<boolean>
  git(args: string[], cwd?: string, extraEnv?: NodeJS.ProcessEnv): Promise<GitResult>
  push(args: string[], hooks?: boolean): Promise<PushResult>
}

const MAX_ROUNDS = 8

export function createRemoteBase(o: RemoteBaseOptions): RemoteBase {
  const env = gitEnv(o.env, {name: 'helix', email: 'helix@localhost'})
  const trackingRef = `refs/remotes/${o.remote}/${o.base}`
  const run = (args: string[], cwd = o.root, extra: NodeJS.ProcessEnv = {}) => git(args, {cwd, env: {...env, ...extra}})

  async function fetch(): Promise<string | null> {
    const r = await run(['fetch', '-q', '--no-tags', o.remote, `+refs/heads/${o.base}:${trackingRef}`])
    if (r.code !== 0) return null
    return tip()
  }

  async function tip(): Promise<string | null> {
    const r = await run(['rev-parse', '--verify', '-q', `${trackingRef}^{commit}`])
    return r.code === 0 ? r.stdout.trim() : null
  }

  async function trackerAt(commit: string): Promise<string> {
    const r = await run(['cat-file', 'blob', `${commit}:${o.trackerRel}`])
    return r.code === 0 ? r.stdout : ''
  }

  async function trackerCommit(parent: string, text: string, message: string): Promise<string> {
    await mkdir(o.scratch, {recursive: true})
    const dir = await mkdtemp(path.join(o.scratch, 'idx-'))
    try {
      const blobFile = path.join(dir, 'blob')
      await writeFile(blobFile, text)
      const blob = await run(['hash-object', '-w', blobFile])
      if (blob.code !== 0) throw new Error(`git hash-object: ${firstLine(blob)}`)
      const idx = {GIT_INDEX_FILE: path.join(dir, 'index')}
      const steps = [
        ['read-tree', parent],
        ['update-index', '--add', '--cacheinfo', `100644,${blob.stdout.trim()},${o.trackerRel}`],
      ]
      for (const s of steps) {
        const r = await run(s, o.root, idx)
        if (r.code !== 0) throw new Error(`git ${s[0]}: ${firstLine(r)}`)
      }
      const tree = await run(['write-tree'], o.root, idx)
      if (tree.code !== 0) throw new Error(`git write-tree: ${firstLine(tree)}`)
      const c = await run(['commit-tree', '-p', parent, '-m', message, tree.stdout.trim()])
      if (c.code !== 0) throw new Error(`git commit-tree: ${firstLine(c)}`)
      return c.stdout.trim()
    } finally {
      await rm(dir, {recursive: true, force: true})
    }
  }

  async function commitTracker(message: string, edit: (paths: ProjectPaths) => Promise<void>): Promise<'pushed' | 'unchanged' | 'unreachable'> {
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const t = await fetch()
      if (!t) return 'unreachable'
      const before = await trackerAt(t)
      await mkdir(o.scratch, {recursive: true})
      const dir = await mkdtemp(path.join(o.scratch, 'edit-'))
      let after: string
      try {
        const ddx = path.join(dir, '.ddx')
        await mkdir(ddx)
        const file = path.join(ddx, 'beads.jsonl')
        await writeFile(file, before)
        await edit({root: dir, dir: ddx, file, lockDir: path.join(ddx, 'beads.lock'), pidFile: path.join(ddx, 'helix.pid'), runState: path.join(ddx, 'run-state.json'), logDir: path.join(dir, 'logs'), contextFile: path.join(dir, 'context.md')})
        after = await readFile(file, 'utf8')
      } finally {
        await rm(dir, {recursive: true, force: true})
      }
      if (after === before) return 'unchanged'
      const commit = await trackerCommit(t, after, message)
      const p = await push([o.remote, `${commit}:refs/heads/${o.base}`], {cwd: o.root, env})
      if (p.ok) {
        await run(['update-ref', trackingRef, commit])
        await fastForwardLocal()
        return 'pushed'
      }
      if (p.unreachable) return 'unreachable'
      if (!refLine(p, `refs/heads/${o.base}`)) throw new Error(`git push: ${p.message}`)
    }
    throw new Error(`the base branch ${o.base} on ${o.remote} kept moving (${MAX_ROUNDS} rounds)`)
  }

  async function fastForwardLocal(): Promise<boolean> {
    const head = await run(['symbolic-ref', '-q', 'HEAD'])
    if (head.stdout.trim() !== `refs/heads/${o.base}`) return false
    const t = await tip()
    if (!t) return false
    const local = await run(['rev-parse', '--verify', '-q', `refs/heads/${o.base}`])
    if (local.code !== 0 || local.stdout.trim() === t) return false
    if ((await run(['merge-base', '--is-ancestor', local.stdout.trim(), t])).code !== 0) return false
    // clean: no staged or unstaged change to a tracked file (untracked files are git's to refuse)
    if ((await run(['diff', '--quiet', 'HEAD'])).code !== 0) return false
    const m = await run(['merge', '--ff-only', '-q', t])
    return m.code === 0
  }

  return {
    trackingRef,
    fetch,
    tip,
    trackerAt,
    commitTracker,
    trackerCommit,
    fastForwardLocal,
    git: run,
    push: (args, hooks = true) => push(args, {cwd: o.root, env, hooks}),
  }
}
