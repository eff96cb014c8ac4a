/**
 * The SIGSTOP torture trial of torture.stress.test.ts (a 3-trial smoke in
 * `npm test`, 20 trials with HELIX_STRESS_FULL=1). Writer A runs `helix tracker update` with the test-only
 * hook HELIX_TEST_PAUSE_BEFORE_RENAME: once its temp file is durable it
 * creates a marker and waits right before its lock/identity check and rename.
 * The test SIGSTOPs it there, ages the lock directory past the stale window
 * (as 10 s of real pause would), lets writer B update another bead (B breaks
 * the lock and writes), then lets A continue. A must notice, redo its change
 * on B's file and exit 0; both changes must be in the file.
 */
import {existsSync, rmSync, utimesSync} from 'node:fs'
import path from 'node:path'
import {expect} from 'vitest'
import {readTracker, clearTrackerCache} from '../../src/tracker/store.js'
import {helix, helixAsync, tempProject} from './helpers.js'
import {waitFor} from '../support/wait.js'

/** A project with `n` beads (`t-0000` …), plus the two the writers fight over. */
export function tortureProject(n = 500): ReturnType<typeof tempProject> {
  const lines: string[] = []
  for (let i = 0; i < n; i++) lines.push(JSON.stringify({id: `t-${String(i).padStart(4, '0')}`, status: 'open', title: `bead ${i}`}))
  lines.push('{"id":"w-a","status":"open","title":"a-0"}', '{"id":"w-b","status":"open","title":"b-0"}')
  return tempProject(lines.sort().join('\n') + '\n')
}

/** Run `trials` trials on one project; returns how many updates were lost (must be 0). */
export async function tortureTrials(trials: number): Promise<{lost: number; exitZero: number}> {
  const {root, paths} = tortureProject()
  const marker = path.join(root, 'paused')
  const expected = new Map<string, string>()
  let exitZero = 0
  let lost = 0
  for (let i = 1; i <= trials; i++) {
    const a = helixAsync(root, ['tracker', 'update', 'w-a', '--title', `a-${i}`], {HELIX_TEST_PAUSE_BEFORE_RENAME: marker})
    // the writer creates the marker, then writes its pid: wait for a whole pid. An empty
    // read is Number('') = 0, and kill(0, SIGSTOP) would stop this test's own process group
    const {readFileSync} = await import('node:fs')
    const pidIn = () => (existsSync(marker) ? readFileSync(marker, 'utf8').trim() : '')
    await waitFor(() => /^[1-9]\d*$/.test(pidIn()), 20_000)
    const pid = Number(pidIn())
    if (!(pid > 1) || pid === process.pid) throw new Error(`torture: bad writer pid '${pidIn()}' in ${marker}`)
    process.kill(pid, 'SIGSTOP')
    try {
      // the paused writer stopped refreshing its lock: age it past the stale window
      const old = new Date(Date.now() - 15_000)
      utimesSync(paths.lockDir, old, old)
      const b = helix(root, ['tracker', 'update', 'w-b', '--title', `b-${i}`])
      expect(b.stderr).toBe('')
      expect(b.code).toBe(0)
      exitZero++
      expected.set('w-b', `b-${i}`)
      rmSync(marker, {force: true})
    } finally {
      process.kill(pid, 'SIGCONT')
    }
    const ra = await a
    expect(ra.stderr).toBe('')
    expect(ra.code).toBe(0)
    exitZero++
    expected.set('w-a', `a-${i}`)
    clearTrackerCache()
    const snap = await readTracker(paths.file)
    expect(snap.beads).toHaveLength(502)
    // every exit-0 change of this trial is in the file
    for (const [id, title] of expected) if (snap.byId.get(id)?.title !== title) lost++
  }
  return {lost, exitZero}
}
