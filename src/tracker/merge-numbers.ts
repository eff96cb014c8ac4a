/**
 * Changes JSON.parse cannot see (SPEC 13.2, 19.3). Two numbers that parse to the
 * same double (`12345678901234567890` and `12345678901234567891`, `1` and `1.0`)
 * compare equal as values, so a side that changed only such a number would look
 * unchanged, and the merge would keep the other side's text and exit 0. The merge
 * asks this module first and fails on such a bead instead (git then shows the
 * conflict to a person): it never guesses which text is meant.
 */
import {topLevelEntries} from './json-scan.js'
import {rawOf} from './lines.js'
import {sameJson} from './merge-fields.js'
import {getOwn} from './own-keys.js'
import type {Bead} from './types.js'

// a JSON string (skipped, so digits inside text never count) or a JSON number
const TOKEN = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g

/** The number texts of a JSON value's text, sorted (key order inside objects does not matter). */
function numberTexts(json: string): string {
  const out: string[] = []
  for (const m of json.matchAll(TOKEN)) if (m[0][0] !== '"') out.push(m[0])
  return out.sort().join(' ')
}

/** Each top-level key's value text in the bead's line (the last copy of a repeated key, as JSON.parse). */
function valueTexts(b: Bead): Map<string, string> {
  const raw = rawOf(b)
  const byKey = new Map<string, string>()
  for (const e of (raw === undefined ? null : topLevelEntries(raw.text)) ?? []) byKey.set(e.key, e.valueRaw)
  return byKey
}

/**
 * The first key whose value two of the given versions of one bead hold as the same
 * parsed value written with different numbers; undefined when there is none.
 */
export function hiddenNumberChange(...versions: Array<Bead | undefined>): string | undefined {
  const beads = versions.filter((b): b is Bead => b !== undefined)
  const texts = beads.map(valueTexts)
  const keys = new Set(texts.flatMap((m) => [...m.keys()]))
  for (const k of keys) {
    const seen: Array<{value: unknown; numbers: string}> = []
    for (let i = 0; i < beads.length; i++) {
      const text = texts[i].get(k)
      if (text === undefined) continue
      const value = getOwn(beads[i], k)
      const numbers = numberTexts(text)
      if (seen.some((s) => s.numbers !== numbers && sameJson(s.value, value))) return k
      seen.push({value, numbers})
    }
  }
  return undefined
}
