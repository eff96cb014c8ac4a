/**
 * The second way past oclif (after the exact shapes in fast-path.ts): any command oclif
 * would run, run from its direct bundle (dist/direct/commands/, built with
 * src/cli/direct-core.ts in place of `@oclif/core`). It finds the command id from argv
 * the way oclif does, and hands the rest of argv to the command, whose flags oclif's
 * own parser reads. Whatever oclif would answer without running a command (no
 * arguments, `--help`, `--version`, a topic, an unknown word, `helix help`) and every
 * case this file is unsure of returns false, and bin/run.js falls through to oclif.
 */
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'

/** A command as the direct table lists it: `args` when it takes positional arguments or is not strict (oclif's hasArgs). */
export type DirectEntry = {args: boolean}
export type DirectTable = Record<string, DirectEntry>

/** never run directly: help reads oclif's Config (commands and topics); the build makes no direct bundle of these */
export const OCLIF_ONLY: ReadonlySet<string> = new Set(['help'])

/**
 * The command id oclif would run for argv and the argv it would hand that command, or
 * null when oclif would do something else. oclif's `normalizeArgv` with a space as the
 * topic separator (its collateSpacedCmdIDFromArgs): words are taken into the id while
 * they extend a known id; after that, a word that is a flag, holds `=`, or follows a
 * command that takes arguments ends the id; any other word still joins it (and names
 * no command, so oclif would call it unknown).
 */
export function directCommand(argv: readonly string[], table: DirectTable): {id: string; argv: string[]} | null {
  if (argv.length === 0 || argv[0] === '--version') return null
  for (const a of argv) {
    if (a === '--') break
    if (a === '--help') return null
  }
  let id: string
  let rest: string[]
  if (argv.length === 1 || argv[0].includes(':')) {
    ;[id, ...rest] = argv
  } else {
    // literally oclif's loop, quirks included: an empty word joins the id without
    // adding to it, and the command's argv starts after as many words as the id has
    const usable = new Set(Object.keys(table).flatMap((k) => k.split(':').map((_, i, a) => a.slice(0, i + 1).join(':'))))
    const words: string[] = []
    const join = (more?: string) => (more ? [...words, more] : words).filter(Boolean).join(':')
    for (const a of argv) {
      if (usable.has(join(a))) words.push(a)
      else if (a.includes('=') || a.startsWith('-') || (join() !== '' && table[join()]?.args)) break
      else words.push(a)
    }
    const found = join()
    // no id at all: oclif takes the first word for one (and finds no such command)
    ;[id, rest] = found ? [found, argv.slice(found.split(':').length)] : [argv[0], argv.slice(1)]
  }
  if (!Object.hasOwn(table, id) || OCLIF_ONLY.has(id)) return null
  return {id, argv: rest}
}

/** a command class of the direct build: direct-core's Command */
type DirectCommand = {id?: string; main(argv: string[]): Promise<void>}

/**
 * Runs argv's command from dist/direct/ under `root` (the installed package), or
 * returns false when oclif should answer (see directCommand), or when there is no
 * direct build (a build that did not bundle).
 */
export async function runDirect(argv: readonly string[], root: string): Promise<boolean> {
  const dir = path.join(root, 'dist', 'direct')
  let table: DirectTable
  try {
    table = JSON.parse(readFileSync(path.join(dir, 'commands.json'), 'utf8')) as DirectTable
  } catch {
    return false
  }
  const hit = directCommand(argv, table)
  if (!hit) return false
  const file = path.join(dir, 'commands', ...hit.id.split(':')) + '.js'
  if (!existsSync(file)) return false
  const Cmd = ((await import(pathToFileURL(file).href)) as {default: DirectCommand}).default
  Cmd.id = hit.id
  await Cmd.main(hit.argv)
  return true
}
