/**
 * The small pieces every tracker operation shares (split out of ops.ts): the
 * `updated_at` stamp, the not-found error, the bead lookup inside a locked
 * snapshot, and the note and label edits on one bead.
 */
import {HelixError, EXIT} from '../util/errors.js'
import type {Bead, TrackerSnapshot} from './types.js'

export function isoNow(now: Date = new Date()): string {
  return now.toISOString()
}

export function notFound(id: string): HelixError {
  return new HelixError(`bead ${id} not found`, EXIT.ERROR)
}

export function getBead(snap: TrackerSnapshot, id: string): Bead {
  const b = snap.byId.get(id)
  if (!b) throw notFound(id)
  return b
}

export function appendText(existing: unknown, text: string): string {
  const cur = typeof existing === 'string' ? existing : ''
  return cur.trim() === '' ? text : `${cur.replace(/\s+$/, '')}\n\n${text}`
}

export function addLabelTo(b: Bead, label: string): boolean {
  const labels = Array.isArray(b.labels) ? b.labels : []
  if (labels.includes(label)) return false
  b.labels = [...labels, label]
  return true
}
