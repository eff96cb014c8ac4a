// Where the real DDx trackers are: ../shared beside the repo (HELIX_SHARED_DIR overrides).
import {existsSync} from 'node:fs'
import path from 'node:path'
import {repoRoot} from './lib.mjs'

const candidates = [process.env.HELIX_SHARED_DIR, path.join(repoRoot, '..', 'shared'), '/work/shared'].filter(Boolean)
const shared = candidates.find((dir) => existsSync(path.join(dir, 'fixtures', 'real-trackers'))) ?? candidates[0]
export const REAL_HELIX = path.join(shared, 'fixtures', 'real-trackers', 'helix-beads.jsonl')
export const REAL_DDX = path.join(shared, 'fixtures', 'real-trackers', 'ddx-beads.jsonl')
