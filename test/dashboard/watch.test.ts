// The dashboard's one watcher per project follows `.ddx/` and `.helix-logs/` even when
// the directories themselves are replaced (a checkout of a commit without them and
// back, `git stash -u` and pop, a restore from a backup): the page went stale for
// good before, because the watch stayed on the old, removed directory.
import {mkdirSync, renameSync, rmSync, writeFileSync, appendFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, it} from 'vitest'
import {makeTempDir} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'
import {watchProject, type ProjectWatch} from '../../src/dashboard/watch.js'

const watches: ProjectWatch[] = []
afterEach(() => {
  while (watches.length) watches.pop()!.close()
})

function project() {
  const base = makeTempDir('helix-dash-watch-')
  const root = path.join(base, 'repo')
  mkdirSync(path.join(root, '.ddx'), {recursive: true})
  mkdirSync(path.join(root, '.helix-logs'))
  writeFileSync(path.join(root, '.ddx', 'beads.jsonl'), '')
  let changes = 0
  watches.push(watchProject(root, () => changes++, undefined, 10))
  return {base, root, changes: () => changes}
}

/**
 * One more change is seen after `act`, then the watcher is let go quiet (no change for
 * 600 ms, three times its 200 ms gap) so that a late echo of this step is not taken
 * for the next step's change.
 */
async function seen(p: {changes(): number}, act: () => void, what: string): Promise<void> {
  const before = p.changes()
  act()
  await waitFor(() => p.changes() > before, {timeoutMs: 10_000, what})
  let last = p.changes()
  let since = Date.now()
  await waitFor(
    () => {
      if (p.changes() !== last) {
        last = p.changes()
        since = Date.now()
      }
      return Date.now() - since >= 600
    },
    {timeoutMs: 20_000, what: `the watcher quiet after ${what}`},
  )
}

describe('dashboard watcher', () => {
  it('follows a .ddx/ that was removed and made again', async () => {
    const p = project()
    const ddx = path.join(p.root, '.ddx')
    await seen(p, () => appendFileSync(path.join(ddx, 'beads.jsonl'), 'a\n'), 'a change in .ddx/')
    await seen(p, () => rmSync(ddx, {recursive: true}), 'the removal of .ddx/')
    await seen(p, () => {
      mkdirSync(ddx)
      writeFileSync(path.join(ddx, 'beads.jsonl'), 'b\n')
    }, 'the new .ddx/')
    // the point: a change inside the new directory is seen too
    await seen(p, () => appendFileSync(path.join(ddx, 'beads.jsonl'), 'c\n'), 'a change in the new .ddx/')
    await seen(p, () => writeFileSync(path.join(ddx, 'run-state.json'), '{}'), 'another change in the new .ddx/')
  })

  it('follows a .ddx/ moved away and another put in its place, and a .helix-logs/ made again', async () => {
    const p = project()
    const ddx = path.join(p.root, '.ddx')
    await seen(p, () => {
      renameSync(ddx, path.join(p.base, 'old-ddx'))
      mkdirSync(ddx)
    }, 'the swap of .ddx/')
    await seen(p, () => writeFileSync(path.join(ddx, 'beads.jsonl'), 'x\n'), 'a change in the swapped-in .ddx/')
    const logs = path.join(p.root, '.helix-logs')
    await seen(p, () => rmSync(logs, {recursive: true}), 'the removal of .helix-logs/')
    await seen(p, () => mkdirSync(logs), 'the new .helix-logs/')
    await seen(p, () => writeFileSync(path.join(logs, 'runs.jsonl'), '{}\n'), 'a change in the new .helix-logs/')
  })
})
