/**
 * The sandboxed attempts of one run (SPEC 21.1) and what confines each agent
 * call: the registry maps an agent's cwd to its attempt's clone and tracker copy,
 * builds the `confine` of a dispatch (proc/sandbox.ts), and takes the agent's
 * tracker edits back from the copy after every call.
 *
 * Taking back is fenced (SPEC 13.3): under the tracker lock, and only while the
 * real tracker's bead still carries the claim token the copy was made with. Only
 * that bead's fields and beads the agent created travel; an edit of any other
 * bead stays in the copy.
 */
import {constants as FS, existsSync} from 'node:fs'
import {open} from 'node:fs/promises'
import path from 'node:path'
import {CLAIM_KEYS} from '../tracker/ops.js'
import {parseTracker} from '../tracker/decode.js'
import {mutateTracker} from '../tracker/store.js'
import type {Bead, TrackerSnapshot} from '../tracker/types.js'
import {executableDirs, sandboxArgv, sandboxEnv, type SandboxSpec} from '../proc/sandbox.js'
import {helixReadable} from '../agents/confine.js'
import type {ProjectPaths} from '../util/root.js'

export interface SandboxAttempt {
  bead: string
  attempt: number
  /** the private clone's top */
  clone: string
  /** the agent's cwd inside the clone */
  dir: string
  trackerDir: string
  trackerFile: string
  /**
   * where the take-back writes: the directory of the tracker the loop reads for this
   * attempt. Unset: the project's real tracker. `--remote`: the attempt worktree's own
   * tracker copy (SPEC 19.2), which the remote landing carries to the base.
   */
  target?: string
}

interface Entry extends SandboxAttempt {
  /** the copy as last taken back (the base of the next take-back) */
  before: TrackerSnapshot
  token: string | null
  /** a drain action's clone (sandbox-actions.ts): it holds no claim, and may edit any bead */
  action?: boolean
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)
const under = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`)

/**
 * The agent's tracker copy, read outside the sandbox from a directory the agent
 * writes: never through a symlink (the agent could point it at a file the sandbox
 * hides from it, and helix would import that file's beads), never blocking on a
 * FIFO or device (opened O_NONBLOCK, fstat'ed first). Null when it is anything but
 * a regular file: nothing is taken back then.
 */
/** a copy larger than this is not read (the agent could make it as large as the disk) */
const MAX_COPY_BYTES = 256 * 1024 * 1024

async function readCopy(file: string): Promise<TrackerSnapshot | null> {
  let fh
  try {
    fh = await open(file, FS.O_RDONLY | FS.O_NOFOLLOW | FS.O_NONBLOCK | FS.O_NOCTTY)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? parseTracker('', file) : null
  }
  try {
    const st = await fh.stat()
    if (!st.isFile() || st.size > MAX_COPY_BYTES) return null
    return parseTracker(await fh.readFile('utf8'), file)
  } catch {
    return null
  } finally {
    await fh.close()
  }
}

/**
 * A drain action's edits of existing beads (it holds no claim to fence them with):
 * field by field, and only where the real bead still has the value the copy started
 * from (or already the action's), so an edit made meanwhile by a worker or the
 * operator wins. Claim fields never travel. Changes `tip` in place; returns the ids.
 */
function actionEdits(before: TrackerSnapshot, after: TrackerSnapshot, tip: TrackerSnapshot): string[] {
  const out: string[] = []
  const claim = new Set<string>(CLAIM_KEYS)
  for (const mine of after.beads) {
    const was = before.byId.get(mine.id)
    const t = tip.byId.get(mine.id)
    if (!was || !t) continue
    let touched = false
    for (const key of new Set([...Object.keys(mine), ...Object.keys(was)])) {
      if (key === 'id' || claim.has(key) || same(mine[key], was[key])) continue
      if (!same(t[key], was[key]) && !same(t[key], mine[key])) continue
      if (mine[key] === undefined) delete t[key]
      else t[key] = mine[key]
      touched = true
    }
    if (touched) out.push(mine.id)
  }
  return out
}

/** the nearest directory at or above `dir` holding a `.git` (directory or file), or null */
function repositoryTop(dir: string): string | null {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if (existsSync(path.join(d, '.git'))) return d
    if (path.dirname(d) === d) return null
  }
}

export interface SandboxAttempts {
  add(a: SandboxAttempt): Promise<void>
  get(bead: string, attempt: number): SandboxAttempt | undefined
  remove(bead: string, attempt: number): Promise<void>
  /** the attempt whose clone holds `cwd` */
  at(cwd: string): SandboxAttempt | undefined
  /** marks a registered clone as a drain action's (SPEC 21.1): its take-back carries edits of any bead */
  asAction(bead: string, attempt: number): void
  /** the agent's edits of its bead, and the beads it created, into the real tracker; returns the ids written */
  takeBack(a: SandboxAttempt): Promise<string[]>
  /** the `confine` of a call that writes nothing (`check`): only a private /tmp is writable */
  confineReadOnly(argv: string[], env: NodeJS.ProcessEnv, cwd: string): {argv: string[]; env: NodeJS.ProcessEnv}
  /** the `confine` of an agent call in `cwd` (its clone writable; elsewhere only the tracker directory) */
  confine(argv: string[], env: NodeJS.ProcessEnv, cwd: string): {argv: string[]; env: NodeJS.ProcessEnv}
  /** read-only paths every confined command needs (the project root, helix, node) */
  readable(): string[]
}

export function createSandboxAttempts(spec: SandboxSpec, paths: ProjectPaths, env: NodeJS.ProcessEnv): SandboxAttempts {
  const entries = new Map<string, Entry>()
  const k = (bead: string, attempt: number): string => `${bead}-${attempt}`

  // a project nested below its repository's top: the top (its .git, the clones' alternate) is bound too
  const top = repositoryTop(paths.root)
  const readable = (): string[] => [paths.root, ...(top && top !== paths.root ? [top] : []), ...helixReadable()]

  async function takeBack(a: SandboxAttempt): Promise<string[]> {
    const e = entries.get(k(a.bead, a.attempt))
    if (!e) return []
    const after = await readCopy(e.trackerFile)
    // a copy replaced by a symlink, FIFO or device: the agent's tracker edits are not taken back
    if (!after) return []
    const before = e.before
    const into = e.target ? {...paths, dir: e.target, file: path.join(e.target, path.basename(paths.file)), lockDir: path.join(e.target, 'beads.lock')} : paths
    const written = await mutateTracker(
      into,
      (tip) => {
        const changed: string[] = []
        const t = tip.byId.get(e.bead)
        const mine = after.byId.get(e.bead)
        const was = before.byId.get(e.bead)
        // fenced: the claim this copy was made under must still be the real one
        if (t && mine && was && e.token !== null && t['claim-token'] === e.token) {
          for (const key of new Set([...Object.keys(mine), ...Object.keys(was)])) {
            if (key === 'id' || same(mine[key], was[key])) continue
            if (mine[key] === undefined) delete t[key]
            else t[key] = mine[key]
          }
          changed.push(e.bead)
        }
        if (e.action) changed.push(...actionEdits(before, after, tip))
        const added: Bead[] = []
        for (const b of after.beads) {
          if (before.byId.has(b.id) || tip.byId.has(b.id)) continue
          const fresh: Bead = {...b}
          for (const c of CLAIM_KEYS) delete fresh[c]
          added.push(fresh)
          changed.push(b.id)
        }
        return {beads: changed.length > 0 ? [...tip.beads, ...added] : null, result: changed}
      },
      {env},
    )
    e.before = after
    return written
  }

  function at(cwd: string): SandboxAttempt | undefined {
    const c = path.resolve(cwd)
    for (const e of entries.values()) if (under(c, e.clone)) return e
    return undefined
  }

  return {
    async add(a) {
      const before = (await readCopy(a.trackerFile)) ?? parseTracker('', a.trackerFile)
      const token = before.byId.get(a.bead)?.['claim-token']
      entries.set(k(a.bead, a.attempt), {...a, before, token: typeof token === 'string' ? token : null})
    },
    get: (bead, attempt) => entries.get(k(bead, attempt)),
    asAction(bead, attempt) {
      const e = entries.get(k(bead, attempt))
      if (e) e.action = true
    },
    confineReadOnly(argv, agentEnv, cwd) {
      const ro = [...readable(), ...executableDirs(argv[0])]
      return {argv: sandboxArgv(spec, argv, {cwd, rw: [], ro, env: agentEnv}), env: sandboxEnv(spec, agentEnv)}
    },
    async remove(bead, attempt) {
      entries.delete(k(bead, attempt))
    },
    at,
    takeBack,
    confine(argv, agentEnv, cwd) {
      const a = at(cwd)
      // an attempt's agent writes its clone and its tracker copy; any other call (alignment, check, the
      // preflight) runs where it was asked to, with only the tracker directory writable (docs/sandbox.md)
      const rw = a ? [a.clone, a.trackerDir] : [paths.dir]
      const ro = [...readable(), ...executableDirs(argv[0])]
      return {argv: sandboxArgv(spec, argv, {cwd, rw, ro, env: agentEnv}), env: sandboxEnv(spec, agentEnv)}
    },
    readable,
  }
}
