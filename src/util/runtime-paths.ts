/**
 * The paths helix writes at run time inside a project (SPEC 16.1). They belong in
 * `.gitignore` (and, for worktrees, `.git/info/exclude`) so an agent's `git add -A`
 * never commits them.
 */
import {closeSync, constants, fstatSync, openSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

export const RUNTIME_IGNORES = ['.helix/', '.helix-logs/', '.ddx/helix.pid', '.ddx/run-state.json', '.ddx/beads.lock/', '.ddx/*.tmp*'] as const

/** The runtime lines `text` (an ignore file) lacks, in order. */
export function missingIgnores(text: string): string[] {
  const have = new Set(text.split(/\r?\n/).map((l) => l.trim()))
  return RUNTIME_IGNORES.filter((p) => !have.has(p))
}

/**
 * Append the missing runtime lines to an ignore file (created when absent).
 * Idempotent; returns the lines it added (empty when nothing was missing).
 * Only a regular file is read or written: a `.gitignore` an agent committed as a
 * symlink (to a file outside the project, or to a FIFO that would block the read
 * and with it every signal) is opened with O_NOFOLLOW | O_NONBLOCK and refused
 * with words, nothing written.
 */
export function ensureIgnored(file: string): string[] {
  let fd: number
  try {
    fd = openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR') throw new Error(notRegular(file))
    throw error
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error(notRegular(file))
    const text = readFileSync(fd, 'utf8')
    const missing = missingIgnores(text)
    if (missing.length === 0) return []
    const sep = text === '' || text.endsWith('\n') ? '' : '\n'
    const header = text.includes('# helix runtime files') ? '' : '# helix runtime files\n'
    // the read left the offset at the end: this appends
    writeFileSync(fd, `${sep}${header}${missing.join('\n')}\n`)
    return missing
  } finally {
    closeSync(fd)
  }
}

function notRegular(file: string): string {
  return `${path.basename(file)} is not a regular file (a symlink, FIFO or directory); helix does not write through it: add its runtime paths to the ignore file yourself (${RUNTIME_IGNORES.join(' ')})`
}

/** `<root>/.gitignore` */
export function gitignorePath(root: string): string {
  return path.join(root, '.gitignore')
}
