/**
 * Validation of user input to the tracker operations (split out of ops.ts):
 * priority, status, booleans, titles, comma lists and `--set key=value` pairs.
 */
import {HelixError, EXIT} from '../util/errors.js'
import {STATUSES} from './types.js'
import {FIELD_BY_KEY} from './fields.js'

export function parsePriority(v: unknown): number {
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : ''
  if (!/^[0-4]$/.test(s)) throw new HelixError(`invalid priority '${String(v)}' (expected an integer 0-4)`, EXIT.ERROR)
  return Number(s)
}

export function parseStatus(v: string): string {
  if (!(STATUSES as readonly string[]).includes(v)) {
    throw new HelixError(`invalid status '${v}' (expected one of ${STATUSES.join(', ')})`, EXIT.ERROR)
  }
  return v
}

export function parseBool(key: string, v: unknown): boolean {
  if (v === true || v === false) return v
  if (v === 'true') return true
  if (v === 'false') return false
  throw new HelixError(`invalid value for ${key}: '${String(v)}' (expected true or false)`, EXIT.ERROR)
}

function parseInt0(key: string, v: string): number {
  if (!/^-?\d+$/.test(v.trim())) throw new HelixError(`invalid value for ${key}: '${v}' (expected an integer)`, EXIT.ERROR)
  return Number(v.trim())
}

export function requireTitle(t: unknown): string {
  if (typeof t !== 'string' || t.trim() === '') throw new HelixError('title must not be blank', EXIT.ERROR)
  return t
}

export function splitList(s: string | string[] | undefined): string[] {
  if (s === undefined) return []
  const parts = Array.isArray(s) ? s.flatMap((x) => x.split(',')) : s.split(',')
  return parts.map((x) => x.trim()).filter((x) => x !== '')
}

/**
 * Value of a `--set key=value`: a string, except keys helix knows the type of
 * (priority, queue-rank, schema_version: integers; execution-eligible: boolean;
 * labels: comma list; status: one of the six).
 */
export function coerceSetValue(key: string, raw: string): unknown {
  switch (FIELD_BY_KEY.get(key)?.kind) {
    case 'id':
      throw new HelixError('cannot set id', EXIT.ERROR)
    case 'deps':
      throw new HelixError("use 'helix tracker dep add|remove' to change dependencies", EXIT.ERROR)
    case 'title':
      return requireTitle(raw)
    case 'priority':
      return parsePriority(raw)
    case 'int':
      return parseInt0(key, raw)
    case 'bool':
      return parseBool(key, raw)
    case 'list':
      return splitList(raw)
    case 'status':
      return parseStatus(raw)
    default:
      return raw
  }
}

/** Parse `k=v` pairs (from repeatable --set). */
export function parseSetPairs(pairs: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const p of pairs ?? []) {
    const i = p.indexOf('=')
    if (i <= 0) throw new HelixError(`invalid --set '${p}' (expected key=value)`, EXIT.ERROR)
    out[p.slice(0, i)] = p.slice(i + 1)
  }
  return out
}
