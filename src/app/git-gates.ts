/**
 * The loop's gates on the real project (SPEC 5.8): acceptance scripts, and the
 * size of a cycle's change for the review threshold (read-only git, argv only).
 */
import {execFile} from 'node:child_process'
import {access, readdir, stat} from 'node:fs/promises'
import path from 'node:path'
import {isExecutableFile, isNotFound} from '../util/files.js'
import {fencedEnv} from '../git/run.js'
import {runScript} from '../proc/process.js'
import type {LoopGates} from '../loop/ports.js'

function run(file: string, args: string[], cwd: string): Promise<{code: number; stdout: string}> {
  return new Promise((resolve) => {
    execFile(file, args, {cwd, env: fencedEnv(cwd, process.env), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024}, (error, stdout) => {
      const code = error ? (typeof (error as {code?: unknown}).code === 'number' ? ((error as {code: number}).code) : 1) : 0
      resolve({code, stdout: stdout ?? ''})
    })
  })
}

/** git's empty tree: the diff base of a repository without commits */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'
/** helix's own bookkeeping is not "the change" the review threshold measures */
const OWN_PATHS = ['.ddx/', '.helix/', '.helix-logs/']

function ownPath(p: string): boolean {
  return OWN_PATHS.some((o) => p.startsWith(o))
}

interface WorktreeState {
  /** tracked files differing from the mark: numstat counts and a stat signature */
  tracked: Map<string, {added: number; deleted: number; stat: string}>
  /** untracked, non-ignored files: line count and a stat signature */
  untracked: Map<string, {lines: number; stat: string}>
}

async function statOf(file: string): Promise<{sig: string; size: number}> {
  try {
    const st = await stat(file)
    return {sig: `${st.size}:${st.mtimeMs}`, size: st.size}
  } catch {
    // removed since it was listed: its signature is 'missing', which counts as a change
    return {sig: 'missing', size: 0}
  }
}

/** untracked files larger than this count as a file only (their lines are not read) */
const MAX_COUNTED_BYTES = 8 * 1024 * 1024

/** The worktree against `mark` (read-only git), minus helix's own paths; null when git fails. */
async function worktreeState(root: string, mark: string): Promise<WorktreeState | null> {
  const diff = await run('git', ['diff', '--numstat', mark, '--'], root)
  if (diff.code !== 0) return null
  const tracked: WorktreeState['tracked'] = new Map()
  for (const row of diff.stdout.split('\n')) {
    const m = /^(\d+|-)\t(\d+|-)\t(.*)$/.exec(row)
    if (!m || ownPath(m[3])) continue
    tracked.set(m[3], {
      added: m[1] === '-' ? 0 : Number(m[1]),
      deleted: m[2] === '-' ? 0 : Number(m[2]),
      stat: (await statOf(path.join(root, m[3]))).sig,
    })
  }
  const untracked: WorktreeState['untracked'] = new Map()
  const others = await run('git', ['ls-files', '--others', '--exclude-standard', '-z'], root)
  if (others.code === 0) {
    const {readFile} = await import('node:fs/promises')
    for (const f of others.stdout.split('\0')) {
      if (!f || ownPath(f) || tracked.has(f)) continue
      const st = await statOf(path.join(root, f))
      let lines = 0
      if (st.size <= MAX_COUNTED_BYTES) {
        try {
          const text = await readFile(path.join(root, f), 'utf8')
          lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
        } catch {
          // unreadable: counts as a file only
        }
      }
      untracked.set(f, {lines, stat: st.sig})
    }
  }
  return {tracked, untracked}
}

export function gitGates(
  root: string,
  onLog: (msg: string, fields: Record<string, unknown>) => void,
  limits: {timeoutSec: number; signal?: AbortSignal} = {timeoutSec: 2700},
): LoopGates {
  let baseline: {mark: string; state: WorktreeState | null} | null = null
  let insideGit: boolean | null = null
  return {
    async acceptanceScripts() {
      const dir = path.join(root, 'scripts')
      let names: string[]
      try {
        names = await readdir(dir)
      } catch (error) {
        // no scripts/ directory: no acceptance gate. An unreadable one must not pass for "no gate".
        if (isNotFound(error)) return []
        throw error
      }
      // a script that is not executable is not part of the gate
      return names
        .filter((x) => /^check-acceptance-.*\.sh$/.test(x))
        .sort()
        .map((n) => path.join(dir, n))
        .filter(isExecutableFile)
    },
    async runScript(file, cwd) {
      // with workers: the worktree's own copy of the script, run there (SPEC 15.1)
      const rel = path.relative(root, file)
      if (cwd && !rel.startsWith('..') && !path.isAbsolute(rel)) file = path.join(cwd, rel)
      // own process group, bounded by the agent timeout, killed on helix's own SIGINT/SIGTERM (proc/process.ts):
      // a hanging acceptance script must not wedge the run
      const r = await runScript(file, {cwd: cwd ?? root, env: fencedEnv(cwd ?? root, process.env), timeoutSec: limits.timeoutSec, ...(limits.signal ? {signal: limits.signal} : {})})
      if (r.timedOut) onLog('acceptance script timed out', {script: file, timeout_sec: limits.timeoutSec})
      onLog('acceptance output', {script: file, output: r.output})
      return r.code
    },
    async head() {
      // outside git this would cost a spawn per cycle: ask once
      if (insideGit === false) return null
      const head = await run('git', ['rev-parse', '--verify', '-q', 'HEAD'], root)
      if (head.code === 0) return head.stdout.trim()
      if (insideGit === null) insideGit = (await run('git', ['rev-parse', '--is-inside-work-tree'], root)).code === 0
      return null
    },
    async commitsSince(sha) {
      if (!sha) return []
      const r = await run('git', ['rev-list', '--reverse', '--max-count=200', `${sha}..HEAD`], root)
      return r.code === 0 ? r.stdout.split('\n').filter((l) => /^[0-9a-f]{40,64}$/.test(l)) : []
    },
    async mark() {
      const head = await run('git', ['rev-parse', '--verify', '-q', 'HEAD'], root)
      let mark: string | null
      if (head.code === 0) mark = head.stdout.trim()
      else mark = (await run('git', ['rev-parse', '--is-inside-work-tree'], root)).code === 0 ? EMPTY_TREE : null
      // what was already uncommitted or untracked at cycle start is not this cycle's change
      baseline = mark ? {mark, state: await worktreeState(root, mark)} : null
      return mark
    },
    async changedSince(mark, dir) {
      if (!mark) return null
      const now = await worktreeState(dir ?? root, mark)
      if (!now) return null
      // a worker's worktree starts clean at its mark: no baseline to subtract
      const before = !dir && baseline && baseline.mark === mark ? baseline.state : null
      let lines = 0
      let files = 0
      for (const [f, n] of now.tracked) {
        const b = before?.tracked.get(f)
        if (b && b.added === n.added && b.deleted === n.deleted && b.stat === n.stat) continue
        files++
        lines += Math.abs(n.added - (b?.added ?? 0)) + Math.abs(n.deleted - (b?.deleted ?? 0))
      }
      // back to the cycle-start commit's content during the cycle: that is a change too
      if (before) {
        for (const [f, b] of before.tracked) {
          if (now.tracked.has(f)) continue
          files++
          lines += b.added + b.deleted
        }
      }
      for (const [f, n] of now.untracked) {
        const b = before?.untracked.get(f)
        if (b && b.stat === n.stat) continue
        files++
        lines += Math.abs(n.lines - (b?.lines ?? 0))
      }
      return {lines, files}
    },
    async exists(file) {
      try {
        await access(path.resolve(root, file))
        return true
      } catch {
        // an answer, not a failure: the file is not there (or not reachable)
        return false
      }
    },
  }
}

