/**
 * The paths helix writes at run time inside a project (SPEC 16.1). They belong in
 * `.gitignore` (and, for worktrees, `.git/info/exclude`) so an agent's `git add -A`
 * never commits them.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
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
 */
export function ensureIgnored(file: string): string[] {
  const text = existsSync(file) ? readFileSync(file, 'utf8') : ''
  const missing = missingIgnores(text)
  if (missing.length === 0) return []
  const sep = text === '' || text.endsWith('\n') ? '' : '\n'
  const header = text.includes('# helix runtime files') ? '' : '# helix runtime files\n'
  writeFileSync(file, `${text}${sep}${header}${missing.join('\n')}\n`)
  return missing
}

/** `<root>/.gitignore` */
export function gitignorePath(root: string): string {
  return path.join(root, '.gitignore')
}
