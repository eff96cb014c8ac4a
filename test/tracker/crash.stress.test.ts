import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {spawn} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {parseTracker, serializeTracker} from '../../src/tracker/codec.js'
import {acquireTrackerLock, LOCK_STALE_MS} from '../../src/tracker/store.js'
import {REPO, cleanEnv, tempProject} from './helpers.js'
import {trials} from '../support/stress.js'
import {trackProcess} from '../support/tmp.js'

// full: 5 batches of 10 kills; smoke (npm test): one batch of 3, one per lane
const TRIALS_PER_BATCH = trials(10, 3)
const BATCHES = trials(5, 1)
/** independent projects killed side by side (the lock wait is idle time) */
const PARALLEL = 3
const SLACK_MS = 2500

/** A writer that keeps rewriting two beads with the same counter in one mutation. */
function writerScript(root: string): string {
  const script = path.join(root, 'writer.mjs')
  writeFileSync(
    script,
    `import {mutateTracker} from ${JSON.stringify(path.join(REPO, 'dist', 'tracker', 'store.js'))}
import {projectPaths} from ${JSON.stringify(path.join(REPO, 'dist', 'util', 'root.js'))}
const paths = projectPaths(process.argv[2], {})
for (let i = 1; ; i++) {
  await mutateTracker(paths, (snap) => {
    snap.byId.get('x').title = 'n-' + i
    snap.byId.get('y').title = 'n-' + i
    return {beads: snap.beads, result: null}
  })
  if (i === 1) process.stdout.write('ready\\n')
}
`,
  )
  return script
}

function initial(): string {
  const pad = 'p'.repeat(2 * 1024 * 1024) // a 2 MB bead so writes take long enough to be interrupted
  return serializeTracker([{id: 'pad', notes: pad}, {id: 'x', title: 'n-0'}, {id: 'y', title: 'n-0'}])
}

async function trial(root: string, script: string, file: string, paths: Parameters<typeof acquireTrackerLock>[0]): Promise<number> {
  const child = trackProcess(spawn(process.execPath, [script, root], {env: cleanEnv(), stdio: ['ignore', 'pipe', 'inherit']}))
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
  await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 120)))
  child.kill('SIGKILL')
  await new Promise((r) => child.once('exit', r))
  // The file is always a complete state: parses, canonical, both beads agree.
  const text = readFileSync(file, 'utf8')
  const snap = parseTracker(text, file)
  expect(snap.beads).toHaveLength(3)
  expect(serializeTracker(snap.beads)).toBe(text)
  expect(snap.byId.get('x')!.title).toBe(snap.byId.get('y')!.title)
  expect(snap.byId.get('x')!.title).not.toBe('n-0')
  // The next writer gets the lock within the stale window (+ slack for a loaded machine).
  const t0 = Date.now()
  const lock = await acquireTrackerLock(paths, 30)
  const waited = Date.now() - t0
  await lock.release()
  expect(waited).toBeLessThan(LOCK_STALE_MS + SLACK_MS)
  return waited
}

describe('kill -9 of a writer at a random moment', () => {
  for (let b = 0; b < BATCHES; b++) {
    it(`batch ${b + 1}: ${TRIALS_PER_BATCH} trials leave a valid before/after file and a recoverable lock`, async () => {
      const waits: number[] = []
      const lanes = Array.from({length: PARALLEL}, async (_, lane) => {
        const {root, paths} = tempProject(initial())
        const script = writerScript(root)
        for (let i = lane; i < TRIALS_PER_BATCH; i += PARALLEL) waits.push(await trial(root, script, paths.file, paths))
      })
      await Promise.all(lanes)
      expect(waits).toHaveLength(TRIALS_PER_BATCH)
      process.stderr.write(`crash batch ${b + 1}: lock waits ms ${waits.join(',')}\n`)
    })
  }
})
