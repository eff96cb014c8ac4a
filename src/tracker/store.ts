/**
 * The tracker store (SPEC 2.2, 13.1, 13.2), one module per job:
 *   read-file.ts   never-blocking reads of regular files only; the file's identity
 *   read-cache.ts  lock-free reads with the per-process, identity-checked parse cache
 *   lock.ts        the writer lock: take, keep, inspect, break when stale
 *   mutate.ts      locked read-modify-write with the check before the rename
 *   temp-files.ts  the temp files of killed writers
 * This module only re-exports them, so callers keep one import path.
 */
export {currentIdentity, notRegularFile, readTrackerBytes, sameIdentity, type FileIdentity} from './read-file.js'
export {clearTrackerCache, readTracker, readTrackerRaw} from './read-cache.js'
export {acquireTrackerLock, breakStaleLock, DEFAULT_LOCK_TIMEOUT_SEC, inspectLock, LOCK_STALE_MS, LOCK_UPDATE_MS, lockTimeoutSec, type HeldLock, type LockInfo} from './lock.js'
export {appendFileDurable, CHANGED_UNDER_LOCK_MESSAGE, MAX_WRITE_RETRIES, mutateTracker, writeFileDurable, type MutationOutcome} from './mutate.js'
export {removeStaleTempFiles, TEMP_FILE_PATTERN, TEMP_MAX_AGE_MS} from './temp-files.js'
