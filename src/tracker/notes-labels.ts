/** The loop's small writes (split out of ops.ts): append a note, add a label, set raw fields. */
import {HelixError, EXIT} from '../util/errors.js'
import type {ProjectPaths} from '../util/root.js'
import type {Bead} from './types.js'
import {mutateTracker} from './store.js'
import {addLabelTo, appendText, getBead, isoNow} from './bead-edit.js'

/** Append `text` to notes (blank-line separated). `once`: skip when notes already contain it. Returns whether it wrote. */
export async function appendNote(paths: ProjectPaths, id: string, text: string, opts: {once?: boolean; now?: Date} = {}): Promise<boolean> {
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    if (opts.once && typeof b.notes === 'string' && b.notes.includes(text)) return {beads: null, result: false}
    b.notes = appendText(b.notes, text)
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: true}
  })
}

/** Add a label (other labels kept). Returns whether it wrote. */
export async function addLabel(paths: ProjectPaths, id: string, label: string, opts: {now?: Date} = {}): Promise<boolean> {
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    if (!addLabelTo(b, label)) return {beads: null, result: false}
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: true}
  })
}

/** Set raw fields (already typed); `undefined` deletes a key. `id` cannot change. */
export async function setFields(paths: ProjectPaths, id: string, fields: Record<string, unknown>, opts: {now?: Date} = {}): Promise<Bead> {
  if ('id' in fields) throw new HelixError('cannot set id', EXIT.ERROR)
  return mutateTracker(paths, (snap) => {
    const b = getBead(snap, id)
    for (const [k, v] of Object.entries(fields)) {
      if (v === undefined) delete b[k]
      else b[k] = v
    }
    b.updated_at = isoNow(opts.now)
    return {beads: snap.beads, result: b}
  })
}
