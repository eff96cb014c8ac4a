/**
 * The queue on the remote's base branch (SPEC 19.1): fetch `<name>/<base>`, read
 * `.ddx/beads.jsonl` at its tip, and write tracker changes as commits pushed to
 * the base by fast-forward. Commits are built with plumbing on a private index
 * (`read-tree`, `update-index`, `write-tree`, `commit-tree`), so no checkout is
 * touched; a non-fast-forward means fetch and apply again. Never a forced push.
 */
import {mkdtemp, rm, writeFile, mkdir} from 'node:fs/promises'
import path from 'node:path'
import {firstLine, gitEnv, type GitResult} from '../git/run.js'
import {openRepo, type Repo, type FetchResult} from '../git/repo.js'
import type {ProjectPaths} from '../util/root.js'
import {HelixError} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {editTrackerText} from './scratch-tracker.js'
import type {PushResult} from './push.js'

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
  /** `git fetch <remote> <base>`; the new tip, or null when the remote did not answer (see `lastFailure`) */
  fetch(): Promise<string | null>
  /** why the last fetch or push failed (git's own line, unsanitized), null after a success */
  lastFailure(): string | null
  /** the typed git layer on this clone (its remote work is queued) */
  readonly repo: Repo
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
  /** move the tracking ref forward to a commit this host pushed */
  setTracking(commit: string): Promise<void>
  git(args: string[], cwd?: string, extraEnv?: NodeJS.ProcessEnv): Promise<GitResult>
  push(args: string[], hooks?: boolean): Promise<PushResult>
}

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/

/** tracker-only commits: a bound, since nothing of an agent's is at stake (a landing's retries are unbounded) */
const MAX_ROUNDS = 40

export function createRemoteBase(o: RemoteBaseOptions): RemoteBase {
  const env = gitEnv(o.env, {name: 'helix', email: 'helix@localhost'})
  const trackingRef = `refs/remotes/${o.remote}/${o.base}`
  const repo = openRepo(o.root, env)
  const run = repo.run
  let failure: string | null = null

  /**
   * One fetch of the base. git's ref locks between this clone's own workers cannot
   * happen (the repo queues its remote work), and a lock another process held is
   * retried: only a transport failure reads as "did not answer" (SPEC 20.1).
   */
  async function fetch(): Promise<string | null> {
    let r: FetchResult = await repo.fetch([o.remote, `+refs/heads/${o.base}:${trackingRef}`])
    for (let i = 0; !r.ok && r.kind === 'race' && i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.floor(Math.random() * 200)))
      r = await repo.fetch([o.remote, `+refs/heads/${o.base}:${trackingRef}`])
    }
    if (!r.ok) {
      failure = r.message
      return null
    }
    failure = null
    return tip()
  }

  const tip = (): Promise<string | null> => repo.revParse(`${trackingRef}^{commit}`)

  /** the last commit id read and its tracker text: a commit never changes, so asking again is waste */
  let lastRead: {commit: string; text: string} | null = null

  async function trackerAt(commit: string): Promise<string> {
    if (lastRead && lastRead.commit === commit) return lastRead.text
    const r = await run(['cat-file', 'blob', `${commit}:${o.trackerRel}`])
    const text = r.code === 0 ? r.stdout : ''
    // only a full object id names one commit for good (a ref name or short id may move)
    if (r.code === 0 && OBJECT_ID.test(commit)) lastRead = {commit, text}
    return text
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
      const after = await editTrackerText(o.scratch, 'edit', before, edit)
      if (after === before) return 'unchanged'
      const commit = await trackerCommit(t, after, message)
      const p = await repo.push([o.remote, `${commit}:refs/heads/${o.base}`])
      if (p.ok) {
        await setTracking(commit)
        await fastForwardLocal()
        return 'pushed'
      }
      if (p.kind === 'unreachable') {
        failure = p.message
        return 'unreachable'
      }
      // a refusal by the remote's own rule (a hook, a protected base) is said in its words, never as a bug
      if (p.kind === 'rejected') throw new HelixError(`the remote ${sanitize(o.remote)} refused helix's push to ${sanitize(o.base)}: ${sanitize(p.message)}`)
      if (p.kind !== 'race') throw new Error(`git push: ${p.message}`)
      // a lost race (another host's push won): fetch and apply again, with jitter
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 50 * Math.min(round + 1, 10))))
    }
    throw new HelixError(`the base branch ${sanitize(o.base)} on ${sanitize(o.remote)} kept moving (${MAX_ROUNDS} rounds)`)
  }

  /** the tracking ref moved to a commit we pushed, only forward, in the clone's queue */
  async function setTracking(commit: string): Promise<void> {
    await repo.serial(async () => {
      const cur = await tip()
      if (!cur || (await repo.isAncestor(cur, commit))) await repo.updateRef(trackingRef, commit, cur ?? undefined)
    })
  }

  async function fastForwardLocal(): Promise<boolean> {
    const head = await run(['symbolic-ref', '-q', 'HEAD'])
    if (head.stdout.trim() !== `refs/heads/${o.base}`) return false
    const t = await tip()
    if (!t) return false
    const local = await repo.revParse(`refs/heads/${o.base}`)
    if (!local || local === t) return false
    if (!(await repo.isAncestor(local, t))) return false
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
    lastFailure: () => failure,
    repo,
    setTracking,
    git: run,
    push: (args, hooks = true) => repo.push(args, {hooks}),
  }
}
