/**
 * Field-by-field three-way merge of one bead (SPEC 19.3). Pure: values in,
 * merged record and notices out. `mergeTracker` (merge.ts) decides which beads
 * need this and keeps every line it can byte for byte.
 *
 * A field changed on one side takes that side. Both sides changed it:
 * - `status`: closed beats everything, then cancelled > reopened > blocked >
 *   in_progress > proposed > open (a side is "reopened" when it says `open` and
 *   the base had the bead closed or cancelled: DDx and helix have no "reopened"
 *   status, they reopen by setting `open` again, DDx adding a `reopen` event);
 *   other strings fall back to the later `updated_at`;
 * - `notes`: ours, then every paragraph of theirs that ours lacks;
 * - `labels`, `dependencies`, `events`: the union minus what either side removed;
 * - the claim (`owner`, `claimed-*`, `claim-token`): as one unit, from one side;
 * - every other field, `updated_at` included: the side with the later `updated_at`.
 * A claim never survives onto a bead whose merged status is not `in_progress`.
 */
import {HelixError, EXIT} from '../util/errors.js'
import {sanitize} from '../util/sanitize.js'
import {getOwn, setOwn} from './own-keys.js'
import type {Bead} from './types.js'

export type Json = unknown

/** Same JSON value (any key order), numbers by Object.is. */
export function sameJson(a: Json, b: Json): boolean {
  if (a === b) return typeof a !== 'number' || Object.is(a, b)
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const bb = b as Json[]
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]))
  }
  const ao = a as Record<string, Json>
  const bo = b as Record<string, Json>
  const ka = Object.keys(ao)
  return ka.length === Object.keys(bo).length && ka.every((k) => Object.hasOwn(bo, k) && sameJson(getOwn(ao, k), getOwn(bo, k)))
}

const CLAIM_FIELDS = ['owner', 'claimed-at', 'claimed-pid', 'claimed-machine', 'claimed-start', 'claim-token'] as const
const CLAIM_ONLY = CLAIM_FIELDS.filter((k) => k !== 'owner')
const CLAIM_SET: ReadonlySet<string> = new Set(CLAIM_FIELDS)

const RANK: Record<string, number> = {closed: 7, cancelled: 6, reopened: 5, blocked: 4, in_progress: 3, proposed: 2, open: 1}

function statusValue(v: Json): string {
  return typeof v === 'string' ? v : v === undefined ? 'open' : ''
}

function rankOf(status: Json, base: Json, baseKnown: boolean): number | undefined {
  const s = statusValue(status)
  // a reopen undoes a finish: `open` where the base had the bead closed or cancelled
  if (s === 'open' && baseKnown && (statusValue(base) === 'closed' || statusValue(base) === 'cancelled')) return RANK.reopened
  return RANK[s]
}

/** Milliseconds of an RFC 3339 time, with the digits past the millisecond as a tie-break; undefined when absent or unparsable. */
function timeKey(v: Json): [number, string] | undefined {
  if (typeof v !== 'string') return undefined
  const ms = Date.parse(v)
  if (Number.isNaN(ms)) return undefined
  const frac = /\.(\d+)/.exec(v)?.[1] ?? ''
  return [ms, frac.padEnd(9, '0')]
}

/** true when theirs was updated later than ours (a tie or no evidence keeps ours). */
export function theirsLater(ours: Bead, theirs: Bead): boolean {
  const o = timeKey(ours.updated_at)
  const t = timeKey(theirs.updated_at)
  if (t === undefined) return false
  if (o === undefined) return true
  return t[0] !== o[0] ? t[0] > o[0] : t[1] > o[1]
}

function paragraphs(s: string): string[] {
  return s
    .split(/\n[ \t\r]*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== '')
}

/** Ours, then each paragraph of theirs that ours does not already hold (helix appends notes after a blank line). */
export function mergeNotes(ours: Json, theirs: Json): Json {
  const o = typeof ours === 'string' ? ours : ''
  const t = typeof theirs === 'string' ? theirs : ''
  if (o.trim() === '') return theirs === undefined ? ours : theirs
  const have = new Set(paragraphs(o))
  const extra = paragraphs(t).filter((p) => !have.has(p))
  if (extra.length === 0) return ours
  return `${o.replace(/\s+$/, '')}\n\n${extra.join('\n\n')}`
}

/** The identity of a list element: a dependency by target and type, anything else by its JSON. */
function elementKey(field: string, v: Json): string {
  if (field === 'dependencies' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
    const d = v as Record<string, Json>
    return JSON.stringify([d.depends_on_id, d.type])
  }
  return JSON.stringify(canonical(v))
}

function canonical(v: Json): Json {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(canonical)
  const o = v as Record<string, Json>
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, canonical(o[k])]),
  )
}

/** Union of both sides minus what either removed from the base; ours' order, then theirs' additions. */
export function mergeList(field: string, base: Json, ours: Json, theirs: Json): Json {
  if (!Array.isArray(ours) || !Array.isArray(theirs) || (base !== undefined && !Array.isArray(base))) return undefined
  const key = (v: Json) => elementKey(field, v)
  const b = new Set((base as Json[] | undefined)?.map(key) ?? [])
  const o = new Set(ours.map(key))
  const t = new Set(theirs.map(key))
  const removed = new Set([...b].filter((k) => !o.has(k) || !t.has(k)))
  const out: Json[] = []
  const seen = new Set<string>()
  for (const v of [...ours, ...theirs]) {
    const k = key(v)
    if (removed.has(k) || seen.has(k)) continue
    seen.add(k)
    out.push(v)
  }
  return out
}

const LIST_FIELDS: ReadonlySet<string> = new Set(['labels', 'dependencies', 'events'])

/**
 * Merge one bead present on both sides. `base` is the bead in the merge base,
 * or undefined when both sides added it (merged as if the base were empty).
 */
export function mergeBead(base: Bead | undefined, ours: Bead, theirs: Bead): Bead {
  const b: Record<string, Json> = base ?? {}
  const later = theirsLater(ours, theirs)
  const out: Record<string, Json> = {}
  const keys = new Set([...Object.keys(ours), ...Object.keys(theirs), ...Object.keys(b)])
  let statusFrom: 'ours' | 'theirs' | 'same' = 'same'
  for (const k of keys) {
    if (CLAIM_SET.has(k)) continue
    const bv = getOwn(b, k)
    const ov = getOwn(ours, k)
    const tv = getOwn(theirs, k)
    let v: Json
    if (sameJson(ov, tv)) v = ov
    else if (sameJson(ov, bv)) v = tv
    else if (sameJson(tv, bv)) v = ov
    else v = bothChanged(String(ours.id), k, bv, ov, tv, base !== undefined, later)
    if (k === 'status' && !sameJson(ov, tv)) statusFrom = sameJson(v, ov) ? 'ours' : 'theirs'
    if (v !== undefined) setOwn(out, k, v)
  }
  mergeClaim(out, b, ours, theirs, statusFrom, later)
  return out as Bead
}

/**
 * A field both sides changed whose rule needs a shape the values do not have (notes
 * that are not text, a list field that is not a list): no rule of 19.3 merges them,
 * and taking one side would drop the other's change. The merge fails instead, and
 * git shows the conflict to a person.
 */
function unmergeable(id: string, k: string, why: string): HelixError {
  return new HelixError(`bead ${sanitize(id)}: both sides changed ${sanitize(k)} and ${why}; not merging it (resolve this conflict by hand)`, EXIT.ERROR)
}

const isText = (v: Json) => typeof v === 'string' || v === undefined
const isList = (v: Json) => Array.isArray(v) || v === undefined

function bothChanged(id: string, k: string, bv: Json, ov: Json, tv: Json, baseKnown: boolean, later: boolean): Json {
  if (k === 'status') {
    if (statusValue(ov) === 'closed') return ov
    if (statusValue(tv) === 'closed') return tv
    const ro = rankOf(ov, bv, baseKnown)
    const rt = rankOf(tv, bv, baseKnown)
    if (ro !== undefined && rt !== undefined && ro !== rt) return ro > rt ? ov : tv
    return later ? tv : ov
  }
  if (k === 'notes') {
    if (!isText(ov) || !isText(tv)) throw unmergeable(id, k, 'one side is not text')
    return mergeNotes(ov, tv)
  }
  if (LIST_FIELDS.has(k)) {
    if (!isList(ov) || !isList(tv) || !isList(bv)) throw unmergeable(id, k, 'one side is not a list')
    const merged = mergeList(k, bv, ov ?? [], tv ?? [])
    return (merged as Json[]).length === 0 && ov === undefined && tv === undefined ? undefined : merged
  }
  return later ? tv : ov
}

/**
 * The claim fields travel together: from the side that changed them, or (both
 * changed) from the side whose status won, else the later one. A claim taken
 * from a side that was in progress is dropped when the merged bead is not (a
 * close or reopen on the other side won); `owner`, also the assignee, stays.
 */
function mergeClaim(out: Record<string, Json>, b: Record<string, Json>, ours: Bead, theirs: Bead, statusFrom: 'ours' | 'theirs' | 'same', later: boolean): void {
  const group = (x: Record<string, Json>) => CLAIM_FIELDS.map((k) => x[k])
  const og = group(ours)
  const tg = group(theirs)
  const bg = group(b)
  let from: Record<string, Json>
  if (sameJson(og, tg) || sameJson(tg, bg)) from = ours
  else if (sameJson(og, bg)) from = theirs
  else if (statusFrom !== 'same') from = statusFrom === 'ours' ? ours : theirs
  else from = later ? theirs : ours
  for (const k of CLAIM_FIELDS) if (from[k] !== undefined) out[k] = from[k]
  if (statusValue(from.status) === 'in_progress' && statusValue(out.status) !== 'in_progress') for (const k of CLAIM_ONLY) delete out[k]
}
