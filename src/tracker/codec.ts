/**
 * The tracker file format (SPEC 2.1, 13.2), one module per job:
 *   lines.ts        physical lines, the one-line parse, RawLine (a line as offsets into one buffer)
 *   decode.ts       strict and lenient parse of a whole file, doctor's per-line findings
 *   incremental.ts  re-parse only the changed region of a file (line-index.ts: where each bead sits)
 *   json-scan.ts    top-level key/value texts of one record
 *   encode.ts       the canonical encoding of one bead
 *   encode-file.ts  the whole file: unchanged lines byte for byte, changed ones canonical
 *   cow.ts          copy-on-write snapshots for mutations
 * This module only re-exports them, so callers keep one import path.
 */
export {MAX_LINE_BYTES, malformedMessage, rawOf, RawLine, type MalformedLine} from './lines.js'
export {lineFindings, parseTracker, parseTrackerLenient, supersededDuplicateLines} from './decode.js'
export {parseTrackerAfter} from './incremental.js'
export {topLevelEntries, type RawEntry} from './json-scan.js'
export {OMIT_WHEN_EMPTY, serializeBead, serializeBeadSlow} from './encode.js'
export {encodeBeadLine, encodeKeepingRawValues, rejectedFileName, serializeTracker, serializeTrackerBuffer, serializeTrackerWithSnapshot} from './encode-file.js'
export {copyBead, cowSnapshot, sameJson, type CowSnapshot} from './cow.js'
