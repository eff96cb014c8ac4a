/**
 * Processes tagged with a dispatch id (SPEC 14.5). Every agent dispatch runs with
 * a unique `HELIX_DISPATCH_ID` in its environment, and with `HELIX_RUN_PID` /
 * `HELIX_RUN_START` naming the helix process that started it. On Linux every
 * process's `/proc/<pid>/environ` is readable by its owner and by root, so the
 * tag finds the processes that left the agent's process group (`setsid`, a double
 * fork). Elsewhere there is no /proc and the list is empty: the group kill is all
 * helix can do.
 */
import {readdirSync, readFileSync, realpathSync} from 'node:fs'

export interface TaggedProcess {
  pid: number
  dispatchId: string
  /** the helix process that started the dispatch, when recorded */
  runPid: number | null
  /** that process's start token (/proc stat field 22), when recorded */
  runStart: string | null
  /** SPEC 18.3a: the project root (real path) of the run that dispatched it, when recorded */
  project: string | null
}

const KEYS = ['HELIX_DISPATCH_ID=', 'HELIX_RUN_PID=', 'HELIX_RUN_START=', 'HELIX_PROJECT='] as const

/** SPEC 18.3a: the `HELIX_PROJECT` value of a project: its root's real path (the root itself when it can't be resolved) */
export function projectTag(root: string): string {
  try {
    return realpathSync(root)
  } catch {
    return root
  }
}

function readTag(pid: number): TaggedProcess | null {
  let buf: Buffer
  try {
    buf = readFileSync(`/proc/${pid}/environ`)
  } catch {
    return null // gone, or not ours to read: not a process helix can end either
  }
  if (buf.indexOf('HELIX_DISPATCH_ID=') < 0) return null
  const found: Array<string | null> = [null, null, null, null]
  for (const entry of buf.toString('latin1').split('\0')) {
    for (let i = 0; i < KEYS.length; i++) if (entry.startsWith(KEYS[i])) found[i] = entry.slice(KEYS[i].length)
  }
  if (!found[0]) return null
  const runPid = found[1] !== null && /^\d+$/.test(found[1]) ? Number(found[1]) : null
  return {pid, dispatchId: found[0], runPid, runStart: found[2] || null, project: found[3] || null}
}

/**
 * Every live process on this host (but this one) that carries a dispatch id and matches `filter`.
 * `among`: look only at these pids (a caller that knows every candidate, e.g. the processes
 * started since a dispatch began); otherwise every pid in /proc.
 */
export function taggedProcesses(filter: (p: TaggedProcess) => boolean = () => true, among?: Iterable<number>): TaggedProcess[] {
  let pids: Iterable<number>
  if (among !== undefined) pids = among
  else {
    let names: string[]
    try {
      names = readdirSync('/proc')
    } catch {
      // no /proc (not Linux): no tagged processes can be found
      return []
    }
    pids = names.filter((n) => /^\d+$/.test(n)).map(Number)
  }
  const out: TaggedProcess[] = []
  for (const pid of pids) {
    if (pid === process.pid) continue
    const tag = readTag(pid)
    if (tag && filter(tag)) out.push(tag)
  }
  return out
}

/** Processes whose dispatch id is `id` exactly or begins with `prefix + '.'` (a claim token's dispatches). */
export function processesOfDispatch(idOrPrefix: string, {prefix = false, among}: {prefix?: boolean; among?: Iterable<number>} = {}): number[] {
  return taggedProcesses((p) => (prefix ? p.dispatchId.startsWith(`${idOrPrefix}.`) || p.dispatchId === idOrPrefix : p.dispatchId === idOrPrefix), among).map((p) => p.pid)
}
