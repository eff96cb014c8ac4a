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
import {readFile} from 'node:fs/promises'
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
}

interface Entry extends SandboxAttempt {
  /** the copy as last taken back (the base of the next take-back) */
  before: TrackerSnapshot
  token: string | null
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)
const under = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`)

async function readCopy(file: string): Promise<TrackerSnapshot> {
  let text = ''
  try {
    text = await readFile(file, 'utf8')
  } catch {
    text = ''
  }
  return parseTracker(text, file)
}

export interface SandboxAttempts {
  add(a: SandboxAttempt): Promise<void>
  get(bead: string, attempt: number): SandboxAttempt | undefined
  remove(bead: string, attempt: number): Promise<void>
  /** the attempt whose clone holds `cwd` */
  at(cwd: string): SandboxAttempt | undefined
  /** the agent's edits of its bead, and the beads it created, into the real tracker; returns the ids written */
  takeBack(a: SandboxAttempt): Promise<string[]>
  /** the `confine` of an agent call in `cwd` (its clone writable; elsewhere only the tracker directory) */
  confine(argv: string[], env: NodeJS.ProcessEnv, cwd: string): {argv: string[]; env: NodeJS.ProcessEnv}
  /** read-only paths every confined command needs (the project root, helix, node) */
  readable(): string[]
}

export function createSandboxAttempts(spec: SandboxSpec, paths: ProjectPaths, env: NodeJS.ProcessEnv): SandboxAttempts {
  const entries = new Map<string, Entry>()
  const k = (bead: string, attempt: number): string => `${bead}-${attempt}`

  const readable = (): string[] => [paths.root, ...helixReadable()]

  async function takeBack(a: SandboxAttempt): Promise<string[]> {
    const e = entries.get(k(a.bead, a.attempt))
    if (!e) return []
    const after = await readCopy(e.trackerFile)
    const before = e.before
    const written = await mutateTracker(
      paths,
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
      const before = await readCopy(a.trackerFile)
      const token = before.byId.get(a.bead)?.['claim-token']
      entries.set(k(a.bead, a.attempt), {...a, before, token: typeof token === 'string' ? token : null})
    },
    get: (bead, attempt) => entries.get(k(bead, attempt)),
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
