/**
 * A small scanner over one record's JSON text: the top-level key/value texts in
 * file order, duplicates included. The encoder uses it to keep the original
 * text of keys helix does not interpret (SPEC 13.2: big integers, `1.0`,
 * escapes); doctor uses it to report duplicate keys.
 */

export interface RawEntry {
  key: string
  keyRaw: string
  valueRaw: string
}

function skipWs(s: string, i: number): number {
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break
    i++
  }
  return i
}

function skipString(s: string, i: number): number {
  // s[i] === '"'
  i++
  while (i < s.length) {
    const c = s.charCodeAt(i)
    if (c === 92) i += 2
    else if (c === 34) return i + 1
    else i++
  }
  return -1
}

function skipValue(s: string, i: number): number {
  const c = s[i]
  if (c === '"') return skipString(s, i)
  if (c === '{' || c === '[') {
    let depth = 0
    while (i < s.length) {
      const d = s[i]
      if (d === '"') {
        i = skipString(s, i)
        if (i < 0) return -1
        continue
      }
      if (d === '{' || d === '[') depth++
      else if (d === '}' || d === ']') {
        depth--
        if (depth === 0) return i + 1
      }
      i++
    }
    return -1
  }
  // number, true, false, null
  while (i < s.length && !/[\s,}\]]/.test(s[i])) i++
  return i
}

/** The top-level key/value texts of a JSON object line, in file order (duplicates included); null when not an object. */
export function topLevelEntries(line: string): RawEntry[] | null {
  let i = skipWs(line, 0)
  if (line[i] !== '{') return null
  i = skipWs(line, i + 1)
  const out: RawEntry[] = []
  if (line[i] === '}') return out
  while (i < line.length) {
    if (line[i] !== '"') return null
    const kEnd = skipString(line, i)
    if (kEnd < 0) return null
    const keyRaw = line.slice(i, kEnd)
    i = skipWs(line, kEnd)
    if (line[i] !== ':') return null
    i = skipWs(line, i + 1)
    const vEnd = skipValue(line, i)
    if (vEnd < 0) return null
    let key: string
    try {
      key = JSON.parse(keyRaw) as string
    } catch {
      // not a JSON string key: not a record we can take apart (callers fall back to the canonical encoding)
      return null
    }
    out.push({key, keyRaw, valueRaw: line.slice(i, vEnd)})
    i = skipWs(line, vEnd)
    if (line[i] === ',') i = skipWs(line, i + 1)
    else if (line[i] === '}') return out
    else return null
  }
  return null
}
