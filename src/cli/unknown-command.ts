/**
 * Did-you-mean for a command or topic nobody has: used by the command_not_found hook
 * (`helix stauts`) and by `helix help stauts`. One line; the typed words are untrusted.
 */
import {sanitize} from '../util/sanitize.js'

/** Edit distance with adjacent transpositions (optimal string alignment): `stauts` is 1 from `status`. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({length: a.length + 1}, (_, i) => Array.from({length: b.length + 1}, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  return d[a.length][b.length]
}

/** The known command or topic closest to `typed` (space-separated), or null when none is close. */
export function suggestCommand(typed: string, known: readonly string[]): string | null {
  let best: string | null = null
  let bestD = Infinity
  for (const k of known) {
    const d = editDistance(typed, k)
    if (d < bestD) {
      best = k
      bestD = d
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(typed.length / 3)) ? best : null
}

/** The one-line message for an unknown command. */
export function unknownCommandLine(typed: string, known: readonly string[]): string {
  const hint = suggestCommand(typed, known)
  return `helix: unknown command '${sanitize(typed)}'${hint ? ` (did you mean '${hint}'?)` : "; run 'helix help' for the list"}`
}

/** The known command and topic names of an oclif config, space-separated. */
export function knownCommands(config: {commandIDs: string[]; topics: Array<{name: string}>}): string[] {
  return [...new Set([...config.commandIDs, ...config.topics.map((t) => t.name)])].map((id) => id.split(':').join(' '))
}
