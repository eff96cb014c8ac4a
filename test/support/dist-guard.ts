// vitest globalSetup for the projects that run the built CLI (e2e, stress): a direct
// `npx vitest` on a stale dist/ fails loudly instead of testing old code (issue 13).
import {readdirSync, statSync} from 'node:fs'
import path from 'node:path'

const REPO = path.resolve(import.meta.dirname, '..', '..')

function newest(dir: string): {mtime: number; file: string} {
  let best = {mtime: 0, file: ''}
  let entries
  try {
    entries = readdirSync(dir, {withFileTypes: true})
  } catch {
    return best
  }
  for (const e of entries) {
    const p = path.join(dir, e.name)
    const cand = e.isDirectory() ? newest(p) : {mtime: statSync(p).mtimeMs, file: p}
    if (cand.mtime > best.mtime) best = cand
  }
  return best
}

/** Throws when dist/ is missing or older than the newest file under src/. */
export function checkDist(repo = REPO): void {
  const src = newest(path.join(repo, 'src'))
  const dist = newest(path.join(repo, 'dist'))
  if (dist.mtime === 0) throw new Error('dist/ is missing: run npm run build (e2e and stress tests run the built CLI)')
  if (src.mtime > dist.mtime) {
    throw new Error(`dist/ is stale (${path.relative(repo, src.file)} is newer than the last build): run npm run build`)
  }
}

export default function setup(): void {
  checkDist()
}
