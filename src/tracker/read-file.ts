/**
 * Reading `beads.jsonl` without ever blocking (SPEC 13.2): opened O_NONBLOCK
 * and fstat'ed before any byte is read, so a FIFO, a device (`/dev/zero`
 * behind a symlink), a directory or a socket is refused at once. And the
 * file's identity (dev, ino, size, mtime in ns): what the read cache and the
 * check before a mutation's rename (SPEC 13.1) compare.
 */
import {closeSync, constants as FS, fstatSync, openSync, readFileSync, statSync, type BigIntStats} from 'node:fs'
import {HelixError, EXIT} from '../util/errors.js'

/** What makes "the same file": any rename, rewrite or append changes one of these. */
export interface FileIdentity {
  dev: bigint
  ino: bigint
  size: bigint
  mtimeNs: bigint
}

export function identityOf(st: BigIntStats): FileIdentity {
  return {dev: st.dev, ino: st.ino, size: st.size, mtimeNs: st.mtimeNs}
}

export function sameIdentity(a: FileIdentity | null, b: FileIdentity | null): boolean {
  if (a === null || b === null) return a === b
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs
}

export function notRegularFile(file: string): HelixError {
  return new HelixError(`${file} is not a regular file`, EXIT.ERROR)
}

/**
 * Opens the tracker for reading and runs `use` on it (the fd is closed after), or
 * returns null when the file does not exist. Never blocks: opened O_NONBLOCK and
 * fstat'ed before any byte is read; anything but a regular file (after following
 * symlinks) is refused with exit 1, and so is any other failure to read it.
 */
export function withTrackerFd<T>(file: string, use: (fd: number, st: BigIntStats) => T): T | null {
  let fd: number
  try {
    fd = openSync(file, FS.O_RDONLY | FS.O_NONBLOCK | FS.O_NOCTTY)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return null
    // a socket cannot be opened (ENXIO); name the real problem
    if (code === 'ENXIO' || code === 'EISDIR' || code === 'ELOOP') throw notRegularFile(file)
    throw new HelixError(`cannot read ${file}: ${(error as Error).message}`, EXIT.ERROR)
  }
  try {
    const st = fstatSync(fd, {bigint: true})
    if (!st.isFile()) throw notRegularFile(file)
    return use(fd, st)
  } catch (error) {
    // a failure of the file system is the file's problem; anything else (a bug in `use`) stays what it is
    if (error instanceof HelixError || typeof (error as {code?: unknown}).code !== 'string') throw error
    throw new HelixError(`cannot read ${file}: ${(error as Error).message}`, EXIT.ERROR)
  } finally {
    closeSync(fd)
  }
}

/**
 * The tracker's bytes and identity, or null when it does not exist (withTrackerFd).
 * `known`: when the file still has this identity, the bytes are not read (buf is null).
 */
export function readTrackerBytes(file: string, known?: FileIdentity): {buf: Buffer | null; id: FileIdentity} | null {
  return withTrackerFd(file, (fd, st) => {
    const id = identityOf(st)
    if (known && sameIdentity(known, id)) return {buf: null, id}
    // One synchronous read: measurably faster than the chunked async read for
    // multi-MB trackers, and readers never wait on anything else meanwhile.
    return {buf: readFileSync(fd), id}
  })
}

/** Identity of the file at `file` now (following symlinks), null when missing. */
export function currentIdentity(file: string): FileIdentity | null {
  try {
    return identityOf(statSync(file, {bigint: true}))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}
