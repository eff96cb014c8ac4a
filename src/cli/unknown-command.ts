/**
 * What to say when oclif finds no command for the words typed: used by the
 * command_not_found hook (`helix stauts`, `helix tracker shwo hx-1`, `helix run extra`)
 * and by `helix help stauts`. One line; the typed words are untrusted.
 */
import {unexpectedArgument} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {closest} from '../util/suggest.js'

/** The known command or topic closest to `typed` (space-separated), or null when none is close. */
export function suggestCommand(typed: string, known: readonly string[]): string | null {
  return closest(typed, known)
}

/** The one-line message for an unknown command. */
export function unknownCommandLine(typed: string, known: readonly string[]): string {
  const hint = suggestCommand(typed, known)
  return `helix: unknown command '${sanitize(typed)}'${hint ? ` (did you mean '${hint}'?)` : "; run 'helix help' for the list"}`
}

type OclifConfigLike = {commandIDs: string[]; topics: Array<{name: string}>}

/** The known command and topic names of an oclif config, space-separated. */
export function knownCommands(config: OclifConfigLike): string[] {
  return [...new Set([...config.commandIDs, ...config.topics.map((t) => t.name)])].map((id) => id.split(':').join(' '))
}

/**
 * The line for the words oclif took for a command id and found nothing under
 * (`tracker shwo hx-1`: oclif folds every word that is not a flag into the id when no
 * command stops it). Words after a known command are arguments it does not take
 * (`helix run: unexpected argument 'extra'`); otherwise the unknown command is the
 * longest known topic plus the one word after it, and the rest are its arguments,
 * which are left out of the line.
 */
export function notFoundLine(words: readonly string[], config: OclifConfigLike): string {
  const commands = new Set(config.commandIDs.map((id) => id.split(':').join(' ')))
  const topics = new Set(config.topics.map((t) => t.name.split(':').join(' ')))
  for (let n = words.length - 1; n >= 1; n--) {
    const head = words.slice(0, n).join(' ')
    if (!commands.has(head)) continue
    return sanitize(unexpectedArgument(head, words.slice(n)).message)
  }
  let n = 0
  while (n < words.length - 1 && topics.has(words.slice(0, n + 1).join(' '))) n++
  return unknownCommandLine(words.slice(0, n + 1).join(' '), knownCommands(config))
}
