/**
 * Tracker mutations (SPEC 2.3, 2.5). Every operation runs under mutateTracker
 * (lock → read → change → atomic write), throws HelixError with the SPEC
 * message and exit code, and stamps `updated_at`. `now` is injectable.
 *
 * A facade (the 400-line rule): the operations live in
 * `lifecycle.ts` (create, close, reopen, update), `claims.ts` (claim, unclaim,
 * release, CLAIM_KEYS, the claim-token fence), `deps.ts`, `notes-labels.ts`
 * (append a note, add a label, set raw fields), `parse-input.ts` (input
 * validation), `ids.ts` (id prefix, new ids) and `bead-edit.ts` (shared pieces).
 */
export {isoNow, notFound} from './bead-edit.js'
export {parsePriority, parseStatus, parseBool, splitList, coerceSetValue, parseSetPairs} from './parse-input.js'
export {configPrefix, idPrefix, newId} from './ids.js'
export type {ClaimOptions, UnclaimResult, Fence} from './claims.js'
export {CLAIM_KEYS, releaseClaim, claimBead, unclaimBead, closedUnclaimMessage, fenceFromEnv, claimLostMessage, checkFence} from './claims.js'
export type {CreateInput, CloseOptions, UpdateChanges, UpdateResult} from './lifecycle.js'
export {createBead, closeBead, reopenBead, updateBead, updateBeadDetailed} from './lifecycle.js'
export {depAdd, depRemove} from './deps.js'
export {appendNote, addLabel, setFields} from './notes-labels.js'
