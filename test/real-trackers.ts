import path from 'node:path'
import {fileURLToPath} from 'node:url'

/**
 * The two real DDx trackers live in the project's shared folder, which sits
 * beside the repository (`../shared`) both here and in CI's fresh clone.
 * HELIX_SHARED_DIR, when set, names it instead. No other place is searched.
 */
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const shared = process.env.HELIX_SHARED_DIR || path.join(repo, '..', 'shared')

export const REAL_TRACKER_DIR = path.join(shared, 'fixtures', 'real-trackers')
export const REAL_HELIX = path.join(REAL_TRACKER_DIR, 'helix-beads.jsonl')
export const REAL_DDX = path.join(REAL_TRACKER_DIR, 'ddx-beads.jsonl')
