/**
 * Did-you-mean: the known word closest to one the operator typed, for an unknown
 * command (src/cli/unknown-command.ts) and an unknown flag (src/cli/base-command.ts).
 */

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

/**
 * The entry of `known` closest to `typed`, or null when none is close: at most 2 edits,
 * or a third of what was typed for longer words. Ties go to the first in `known`.
 */
export function closest(typed: string, known: readonly string[]): string | null {
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
