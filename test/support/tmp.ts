// The one temp-directory and child-process fixture every test uses (issue 13: no leaks).
//
// `makeTempDir()` creates a real directory under $TMPDIR and registers it; `trackProcess()`
// registers a spawned process. `test/support/setup.ts` (a vitest setupFile for every
// project) removes and kills them: what a test (or its beforeEach) created goes after
// that test; what a file created at collection time or in beforeAll goes after the file.
// `tempDir()` is the same with `Symbol.dispose`, for `using dir = tempDir()`.
import type {ChildProcess} from 'node:child_process'
import {mkdtempSync, realpathSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

interface Scope {
  dirs: string[]
  pids: Array<{pid: number; group: boolean; child?: ChildProcess}>
}

const fileScope: Scope = {dirs: [], pids: []}
let testScope: Scope | undefined

const current = (): Scope => testScope ?? fileScope

/** A fresh real directory (symlinks resolved) under the OS temp dir (or `base`), removed after the test. */
export function makeTempDir(prefix = 'helix-test-', base = tmpdir()): string {
  const dir = realpathSync(mkdtempSync(path.join(base, prefix)))
  current().dirs.push(dir)
  return dir
}

/** `using d = tempDir()`: removed when the block ends (and after the test in any case). */
export function tempDir(prefix?: string): {path: string} & Disposable {
  const dir = makeTempDir(prefix)
  return {path: dir, [Symbol.dispose]: () => removeDir(dir)}
}

/**
 * Kill this process after the test: its whole group with `{group: true}` (a child spawned
 * `detached` leads its own group). Returns what it was given, for chaining.
 */
export function trackProcess<T extends ChildProcess | number>(child: T, opts: {group?: boolean} = {}): T {
  const pid = typeof child === 'number' ? child : child.pid
  if (pid) current().pids.push({pid, group: opts.group ?? false, child: typeof child === 'number' ? undefined : child})
  return child
}

export function removeDir(dir: string): void {
  rmSync(dir, {recursive: true, force: true, maxRetries: 3, retryDelay: 50})
}

function killQuiet(pid: number, group: boolean, child?: ChildProcess): void {
  // a child node has already reaped is not signalled: its pid may belong to someone else now
  // (its group still is, when it led one: members can outlive the leader)
  const reaped = child !== undefined && (child.exitCode !== null || child.signalCode !== null)
  if (group) {
    try {
      process.kill(-pid, 'SIGKILL')
      return
    } catch {
      // not a group leader (or already gone): fall back to the pid itself
    }
  }
  if (reaped) return
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

function drain(scope: Scope): void {
  for (const {pid, group, child} of scope.pids.splice(0).reverse()) killQuiet(pid, group, child)
  for (const dir of scope.dirs.splice(0).reverse()) removeDir(dir)
}

/** setupFile hooks (see setup.ts). */
export const lifecycle = {
  testStarts(): void {
    testScope = {dirs: [], pids: []}
  },
  testEnds(): void {
    if (testScope) drain(testScope)
    testScope = undefined
  },
  fileEnds(): void {
    if (testScope) drain(testScope)
    testScope = undefined
    drain(fileScope)
  },
}
