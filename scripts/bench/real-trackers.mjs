// Where the real DDx trackers are: ../shared beside the repository (a fresh clone
// has it there too), or HELIX_SHARED_DIR. Nothing else is guessed.
import {existsSync} from 'node:fs'
import path from 'node:path'
import {repoRoot} from './lib.mjs'

const shared = process.env.HELIX_SHARED_DIR || path.join(repoRoot, '..', 'shared')
const dir = path.join(shared, 'fixtures', 'real-trackers')
if (!existsSync(dir)) {
  console.error(`bench: no real trackers at ${dir}: put the shared folder beside the repository (../shared) or set HELIX_SHARED_DIR`)
  process.exit(1)
}
export const REAL_HELIX = path.join(dir, 'helix-beads.jsonl')
export const REAL_DDX = path.join(dir, 'ddx-beads.jsonl')
