/**
 * The real ProcessProbe: hostname, kill(0) + /proc state (zombies are dead),
 * /proc/<pid>/stat starttime as the start token, and a lazily imported ps-list
 * scan for helix processes naming a bead.
 */
import {readFileSync} from 'node:fs'
import os from 'node:os'
import {pidAlive} from './process.js'

/**
 * What the process side of claim liveness needs (SPEC 2.4). The real one is
 * `realProbe` below; tests pass fakes.
 */
export interface ProcessProbe {
  hostname(): string
  /** true when pid is running and not a zombie */
  isRunning(pid: number): boolean
  /** opaque start token of a running pid (e.g. /proc/<pid>/stat field 22), or undefined */
  startToken(pid: number): string | undefined
  /** true when a running helix process on this host has the bead id on its command line */
  helixProcessNamesBead(beadId: string): Promise<boolean> | boolean
  /**
   * true when a process on this host carries a dispatch id of this claim token
   * (HELIX_DISPATCH_ID `<token>.<n>`, SPEC 13.3/14.5). Optional: without it the
   * liveness check scans /proc itself (src/proc/tagged.ts).
   */
  dispatchAlive?(claimToken: string): boolean
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const close = stat.lastIndexOf(')')
    if (close < 0) return undefined
    // fields after "pid (comm)": index 0 = field 3 (state)
    return stat.slice(close + 2).trim().split(/\s+/)
  } catch {
    // the process is gone (or no /proc): no fields
    return undefined
  }
}

/** true when pid is running and not a zombie (one rule for the whole code base). */
export const pidRunning = pidAlive

export function startTokenOf(pid: number): string | undefined {
  const f = statFields(pid)
  // field 22 (starttime) is index 19 after the comm
  return f && f.length > 19 ? f[19] : undefined
}

export function currentStartToken(): string | undefined {
  return startTokenOf(process.pid)
}

/**
 * Whether a command line names the bead as a word of its own. A path or ref that only
 * contains the id (`.helix/worktrees/hx-b-1`, `helix/hx-b-1`: git at work on an attempt's
 * worktree or branch, in this project or another) is no evidence that anyone works on the
 * bead, and such a match kept a dead run's claim live.
 */
export function namesBead(cmd: string, beadId: string): boolean {
  return cmd.split(/[\s"'=,;:()]+/).includes(beadId)
}

export function realProbe(): ProcessProbe {
  // asked once per claim checked (11,000 times in a 100k-bead tracker): one syscall per probe is enough
  let host: string | undefined
  return {
    hostname: () => (host ??= os.hostname()),
    isRunning: pidRunning,
    startToken: startTokenOf,
    async helixProcessNamesBead(beadId: string): Promise<boolean> {
      if (!beadId) return false
      try {
        const psList = (await import('ps-list')).default
        const procs = await psList()
        return procs.some((p) => p.pid !== process.pid && typeof p.cmd === 'string' && p.cmd.includes('helix') && namesBead(p.cmd, beadId) && pidRunning(p.pid))
      } catch {
        // ps-list unavailable: no process evidence either way; the claim's pid/start-token checks still decide
        return false
      }
    },
  }
}
