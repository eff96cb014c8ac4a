/**
 * SPEC 13 through the built CLI (`npm run build` first): non-regular trackers,
 * decoy pid files, `--` ids, hostile payloads in text output and the run-state
 * denied count. The SIGSTOP torture is torture.stress.test.ts (a 3-trial smoke
 * in `npm test`, 20 trials in `npm run test:stress`).
 */
import {spawn, spawnSync} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {pidAlive} from '../../src/state/pidfile.js'
import {helix, tempProject, stubEnv} from './helpers.js'
import {trackProcess} from '../support/tmp.js'

// Part 2 of 3: decoy pid files (issue 9.2) and ids that begin with -.

describe('decoy pid file (issue 9.2)', () => {
  for (const start of ['garbage', '', '2099-01-01T00:00:00.000Z']) {
    it(`start field '${start}': stop, status and run never signal the named process`, async () => {
      const decoy = spawn('sleep', ['3333'], {stdio: 'ignore'})
      trackProcess(decoy)
      const {root, paths} = tempProject('{"id":"hx-a","status":"closed","title":"done"}\n')
      spawnSync('git', ['init', '-q'], {cwd: root})
      const env = stubEnv()
      writeFileSync(paths.pidFile, `${decoy.pid} ${start}\n`)
      const stop = helix(root, ['stop'], env)
      expect(stop.code).toBe(1)
      expect(pidAlive(decoy.pid!)).toBe(true)
      writeFileSync(paths.pidFile, `${decoy.pid} ${start}\n`)
      helix(root, ['status'], env)
      expect(pidAlive(decoy.pid!)).toBe(true)
      writeFileSync(paths.pidFile, `${decoy.pid} ${start}\n`)
      const run = helix(root, ['run', '--agent', 'codex', '--max-cycles', '1'], env)
      expect(run.stderr).not.toContain('already running')
      await new Promise((r) => setTimeout(r, 100)) // a signal sent would have been delivered by now
      expect(pidAlive(decoy.pid!)).toBe(true)
    })
  }
})

describe('ids that begin with - (after --)', () => {
  it('show, update, close, reopen, dep add/remove address them', () => {
    const {root, paths} = tempProject('{"id":"-x","title":"dash"}\n{"id":"-y","status":"closed","title":"y"}\n')
    expect(helix(root, ['tracker', 'show', '--', '-x']).stdout).toContain('[open] -x (task) — dash')
    expect(helix(root, ['tracker', 'update', '--title', 'renamed', '--', '-x']).code).toBe(0)
    expect(helix(root, ['tracker', 'dep', 'add', '--', '-x', '-y']).code).toBe(0)
    expect(helix(root, ['tracker', 'dep', 'tree', '--', '-x']).stdout).toContain('-y [closed] y')
    expect(helix(root, ['tracker', 'dep', 'remove', '--', '-x', '-y']).code).toBe(0)
    expect(helix(root, ['tracker', 'close', '--', '-x']).stdout).toBe('closed -x\n')
    expect(helix(root, ['tracker', 'reopen', '--', '-x']).stdout).toBe('reopened -x\n')
    expect(JSON.parse(readFileSync(paths.file, 'utf8').split('\n')[0])).toMatchObject({id: '-x', title: 'renamed', status: 'open'})
  })
})
