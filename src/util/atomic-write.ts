/**
 * Durable atomic replace of a file: write a temp file BESIDE the
 * target, fsync it, rename it over the target, fsync the directory.
 *
 * - A symlink is kept: the write goes to the link's final target (realpath),
 *   the temp file is made beside that target, and the link itself is untouched
 *   (`fs.rename` over a symlink would replace the link with a regular file).
 * - The target keeps its permission bits (open's mode is filtered by the umask,
 *   so the temp file is chmod'ed explicitly).
 * - `beforeRename` runs after the temp file is durable and right before the
 *   rename; when it throws, the temp file is removed and nothing is replaced.
 *   The tracker store uses it for its "still the file I read, still my lock"
 *   check (SPEC 13.1).
 */
import {closeSync, fchmodSync, fsyncSync, lstatSync, openSync, promises as fsp, readlinkSync, realpathSync, renameSync, rmSync, statSync, writeSync, writevSync} from 'node:fs'
import path from 'node:path'

export interface AtomicWriteOptions {
  /** mode for a file that does not exist yet (default 0o644) */
  mode?: number
  /** called with the temp path right before the rename; throwing aborts the write */
  beforeRename?: (tmp: string, target: string) => Promise<void> | void
  /**
   * fsync the file before the rename and the directory after it (default true). Off only
   * for a file helix rewrites several times a cycle and can lose the last version of on a
   * power loss (run-state): the rename still never leaves a torn file after a crash of helix.
   */
  durable?: boolean
}

/** `.<name>.tmp-<pid>-<random>` beside `file`: the pattern cleanup code looks for. */
export function tempNameFor(file: string): string {
  const rand = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`
  return path.join(path.dirname(file), `.${path.basename(file)}.tmp-${process.pid}-${rand}`)
}

/** The path a write to `file` really replaces: the symlink's final target, or `file` itself. */
export async function writeTarget(file: string): Promise<string> {
  return writeTargetSync(file)
}

function writeTargetSync(file: string): string {
  try {
    if (!lstatSync(file).isSymbolicLink()) return file
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return file
    throw error
  }
  try {
    return realpathSync(file)
  } catch (error) {
    // a dangling link: write to where it points, so the link stays a link
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    return path.resolve(path.dirname(file), readlinkSync(file))
  }
}

function fsyncDir(dir: string): void {
  let fd: number | undefined
  try {
    fd = openSync(dir, 'r')
    fsyncSync(fd)
  } catch (error) {
    // Some filesystems (and platforms) refuse fsync on a directory; the rename
    // has already happened and is atomic, only its durability across a power
    // loss is weaker there. Anything else is a real failure.
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EINVAL' && code !== 'ENOTSUP' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'EBADF') throw error
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Write every byte of `parts`, in order (writev; a short write goes on from where it stopped). No concatenated copy. */
function writeAllv(fd: number, parts: Uint8Array[]): void {
  let rest = parts.filter((p) => p.length > 0)
  while (rest.length > 0) {
    // at most IOV_MAX (1024) buffers per call
    let written = writevSync(fd, rest.slice(0, 1024))
    let i = 0
    while (i < rest.length && written >= rest[i].length) written -= rest[i++].length
    rest = rest.slice(i)
    if (rest.length > 0 && written > 0) rest[0] = rest[0].subarray(written)
  }
}

function writeAll(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
  let off = 0
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off)
}

/**
 * Atomically replace `file` (or its symlink target) with `data` (or the buffers
 * of `data` back to back). Returns the path written.
 *
 * The file system calls are synchronous: a run makes several of these
 * writes per cycle, each about ten calls on small files (run-state) or one large
 * write (the tracker), and every thread-pool round trip is a wake-up that waits for
 * a CPU on a loaded machine. Only `beforeRename` may await.
 */
export async function atomicWrite(file: string, data: string | Uint8Array | Uint8Array[], opts: AtomicWriteOptions = {}): Promise<string> {
  const target = writeTargetSync(file)
  const dir = path.dirname(target)
  let mode = opts.mode ?? 0o644
  try {
    mode = statSync(target).mode & 0o7777
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const tmp = tempNameFor(target)
  const fd = openSync(tmp, 'wx', mode)
  try {
    fchmodSync(fd, mode)
    if (Array.isArray(data)) writeAllv(fd, data)
    else writeAll(fd, data)
    if (opts.durable !== false) fsyncSync(fd)
  } catch (error) {
    try {
      closeSync(fd)
    } catch {
      // the write error is the one to report
    }
    rmSync(tmp, {force: true})
    throw error
  }
  closeSync(fd)
  try {
    if (opts.beforeRename) await opts.beforeRename(tmp, target)
    renameSync(tmp, target)
  } catch (error) {
    rmSync(tmp, {force: true})
    throw error
  }
  if (opts.durable !== false) fsyncDir(dir)
  return target
}

/** Append `data` to `file` (created if missing) and fsync it. */
export async function appendDurable(file: string, data: string | Uint8Array): Promise<void> {
  const fh = await fsp.open(file, 'a', 0o644)
  try {
    await fh.writeFile(data)
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/**
 * Remove temp files in `dir` whose name matches `pattern` and whose mtime is
 * older than `maxAgeMs` (left by a killed writer). Returns the removed paths.
 */
export async function removeOldTempFiles(dir: string, pattern: RegExp, maxAgeMs: number, now: number = Date.now()): Promise<string[]> {
  let names: string[]
  try {
    names = await fsp.readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const removed: string[] = []
  for (const name of names) {
    if (!pattern.test(name)) continue
    const p = path.join(dir, name)
    try {
      const st = await fsp.lstat(p)
      if (!st.isFile() || now - st.mtimeMs < maxAgeMs) continue
      await fsp.rm(p, {force: true})
      removed.push(p)
    } catch (error) {
      // removed by another writer between readdir and here: that is the goal
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  }
  return removed
}
