/**
 * The tracker merge driver as git sees it (SPEC 19.3): registering it in a
 * repository, and running it on the three files git hands over.
 *
 * Registered command: `helix tracker merge %O %A %B`, found on PATH when git
 * runs it. Not an absolute path: the repository config outlives any one
 * install (upgrades, nvm switches, npx caches), and every host of a fleet has
 * its own. When `helix` is not on PATH git's run of it fails, and a failed
 * driver is a conflict: nothing is lost, and `registerMergeDriver` says so.
 */
import {existsSync, readFileSync, statSync, writeFileSync, accessSync, constants as fsc} from 'node:fs'
import path from 'node:path'
import {HelixError, EXIT, errorMessage} from '../util/errors.js'
import {atomicWrite} from '../util/atomic-write.js'
import {git, gitEnv} from '../git/run.js'
import {mergeTracker, type MergeResult, type MergeSides} from '../tracker/merge.js'

export const MERGE_DRIVER_NAME = 'helix-beads'
export const MERGE_DRIVER_COMMAND = 'helix tracker merge %O %A %B'
export const MERGE_DRIVER_LABEL = 'helix tracker merge driver (SPEC 19.3)'
export const GITATTRIBUTES_LINE = `.ddx/beads.jsonl merge=${MERGE_DRIVER_NAME}`

export interface MergeDriverRegistration {
  /** false when `root` is not inside a git work tree (nothing to register) */
  git: boolean
  /** what this call added: `.gitattributes`, `merge.helix-beads.driver`, `merge.helix-beads.name` */
  added: string[]
  /** false when no `helix` executable is on PATH (git's run of the driver would fail: a conflict) */
  onPath: boolean
}

/** true when some file `helix` on PATH is executable. */
export function helixOnPath(env: NodeJS.ProcessEnv = process.env): boolean {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue
    try {
      accessSync(path.join(dir, 'helix'), fsc.X_OK)
      return true
    } catch {
      // not here: try the next PATH entry
    }
  }
  return false
}

/** The `.gitattributes` text already routes the tracker to our driver. */
function hasAttributesLine(text: string): boolean {
  return text.split(/\r?\n/).some((l) => {
    const words = l.trim().split(/\s+/)
    return words[0] === '.ddx/beads.jsonl' && words.includes(`merge=${MERGE_DRIVER_NAME}`)
  })
}

/**
 * Register the driver for the project at `root` (idempotent): the
 * `.gitattributes` line beside `.ddx/`, and `merge.helix-beads.driver` and
 * `.name` in the repository's config, each only when missing (a value someone
 * set is theirs). Throws HelixError when a file cannot be written.
 */
export async function registerMergeDriver(root: string, env: NodeJS.ProcessEnv = process.env): Promise<MergeDriverRegistration> {
  const genv = gitEnv(env)
  const inside = await git(['rev-parse', '--is-inside-work-tree'], {cwd: root, env: genv})
  if (inside.code !== 0 || inside.stdout.trim() !== 'true') return {git: false, added: [], onPath: helixOnPath(env)}
  const added: string[] = []
  const attrs = path.join(root, '.gitattributes')
  try {
    const text = existsSync(attrs) ? readFileSync(attrs, 'utf8') : ''
    if (!hasAttributesLine(text)) {
      const sep = text === '' || text.endsWith('\n') ? '' : '\n'
      writeFileSync(attrs, `${text}${sep}${GITATTRIBUTES_LINE}\n`)
      added.push('.gitattributes')
    }
  } catch (error) {
    throw new HelixError(`cannot update ${attrs}: ${errorMessage(error)}`, EXIT.ERROR)
  }
  for (const [key, value] of [
    [`merge.${MERGE_DRIVER_NAME}.driver`, MERGE_DRIVER_COMMAND],
    [`merge.${MERGE_DRIVER_NAME}.name`, MERGE_DRIVER_LABEL],
  ]) {
    const have = await git(['config', '--get', key], {cwd: root, env: genv})
    if (have.code === 0) continue
    const set = await git(['config', '--local', key, value], {cwd: root, env: genv})
    if (set.code !== 0) throw new HelixError(`cannot set git config ${key}: ${(set.stderr || set.stdout).trim().split('\n')[0]}`, EXIT.ERROR)
    added.push(key)
  }
  return {git: true, added, onPath: helixOnPath(env)}
}

function readSide(file: string, which: string): Buffer {
  try {
    if (!statSync(file).isFile()) throw new HelixError(`tracker merge: ${which} ${file} is not a regular file`, EXIT.ERROR)
    return readFileSync(file)
  } catch (error) {
    if (error instanceof HelixError) throw error
    throw new HelixError(`tracker merge: cannot read ${which} ${file}: ${errorMessage(error)}`, EXIT.ERROR)
  }
}

/**
 * What git runs: merge `base`, `ours`, `theirs` and write the result over
 * `ours` (git's %A). On any failure `ours` is left as it was and the error
 * is thrown (non-zero exit: git reports a conflict).
 */
export async function runMergeDriver(files: MergeSides<string>): Promise<MergeResult> {
  const input = {base: readSide(files.base, 'base'), ours: readSide(files.ours, 'ours'), theirs: readSide(files.theirs, 'theirs')}
  // errors name the side (git's temp file names say nothing to a person)
  const result = mergeTracker(input, {base: 'tracker merge: base', ours: 'tracker merge: ours', theirs: 'tracker merge: theirs'})
  try {
    // whole or not at all: git puts %A in the work tree when the driver fails, so a write
    // cut short (a full disk, a file size limit, a kill) must leave ours as it was
    await atomicWrite(files.ours, result.buf)
  } catch (error) {
    throw new HelixError(`tracker merge: cannot write ${files.ours}: ${errorMessage(error)}`, EXIT.ERROR)
  }
  return result
}
