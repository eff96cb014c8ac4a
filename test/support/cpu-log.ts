// HELIX_TEST_CPU_LOG=<file>: each test file appends `<file>\t<CPU-s>\t<worker RSS MB>` to it, the CPU its
// worker and every process the worker started and reaped used while the file ran (user +
// system, from /proc/self/stat: the worker's own time and its reaped children's). The
// workers are reused (`isolate: false`) and run one file at a time, so what a worker used
// from the end of its previous file (or its first file's first hook) to the end of this one
// is this file's, its import and collection included. Not counted: vitest's
// transform in the main process, and a grandchild whose parent exited before it did (it is
// reaped by init). For a measuring run only; unset, nothing is read or written.
import {appendFileSync, readFileSync} from 'node:fs'
import path from 'node:path'

const TICKS_PER_S = 100 // USER_HZ on Linux

let started: number | undefined

/** utime + stime + cutime + cstime of this process, in seconds (undefined off Linux) */
export function cpuSeconds(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    // the fields after the command name, which is in parentheses and may hold spaces
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields 14-17 of proc(5) are at 11-14 here (field 3, the state, is at 0)
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS_PER_S
  } catch {
    return undefined
  }
}

export function cpuLogStarts(): void {
  if (process.env.HELIX_TEST_CPU_LOG && started === undefined) started = cpuSeconds()
}

export function cpuLogEnds(testPath: string): void {
  const log = process.env.HELIX_TEST_CPU_LOG
  if (!log || started === undefined) return
  const now = cpuSeconds()
  if (now !== undefined) appendFileSync(log, `${path.relative(process.cwd(), testPath)}\t${(now - started).toFixed(2)}\t${Math.round(process.memoryUsage.rss() / 1e6)}\n`)
  started = now
}
