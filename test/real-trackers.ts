import {existsSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

/**
 * The two real DDx trackers live in the project's shared folder, which sits
 * beside the repository (`../shared`) both here and in CI's fresh clone.
 * HELIX_SHARED_DIR overrides it.
 */
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const candidates = [process.env.HELIX_SHARED_DIR, path.join(repo, '..', 'shared'), '/work/shared'].filter(Boolean) as string[]
const shared = candidates.find((dir) => existsSync(path.join(dir, 'fixtures', 'real-trackers'))) ?? candidates[0]

export const REAL_TRACKER_DIR = path.join(shared, 'fixtures', 'real-trackers')
export const REAL_HELIX = path.join(REAL_TRACKER_DIR, 'helix-beads.jsonl')
export const REAL_DDX = path.join(REAL_TRACKER_DIR, 'ddx-beads.jsonl')
