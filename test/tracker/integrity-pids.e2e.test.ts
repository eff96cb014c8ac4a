/**
 * SPEC 13 through the built CLI (`npm run build` first): non-regular trackers,
 * decoy pid files, `--` ids, hostile payloads in text output and the run-state
 * denied count. The SIGSTOP torture is torture.stress.test.ts (a 3-trial smoke
 * in `npm test`, 20 trials in `npm run test:stress`).
 */
import {spawn, spawnSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {pidAlive} from '../../src/state/pidfile.js'
import {helix, tempProject, stubEnv} from './helpers.js'
import {trackProcess} from '../support/tmp.js'

// Part 2 of 3: decoy pid files (issue 9.2); `stop` and `status` read the pid file in-process
// (integrity.test.ts), `run` here through the built CLI. Ids that begin with -: integrity.test.ts.

describe('decoy pid file (issue 9.2)', () => {
  for (const start of ['garbage', '', '2099-01-01T00:00:00.000Z']) {
    it(`start field '${start}': run does not take it for a live run and never signals the named process`, async () => {
      const decoy = spawn('sleep', ['3333'], {stdio: 'ignore'})
      trackProcess(decoy)
      const {root, paths} = tempProject('{"id":"hx-a","status":"closed","title":"done"}\n')
      spawnSync('git', ['init', '-q'], {cwd: root})
      const env = stubEnv()
      writeFileSync(paths.pidFile, `${decoy.pid} ${start}\n`)
      const run = helix(root, ['run', '--agent', 'codex', '--max-cycles', '1'], env)
      expect(run.stderr).not.toContain('already running')
      await new Promise((r) => setTimeout(r, 100)) // a signal sent would have been delivered by now
      expect(pidAlive(decoy.pid!)).toBe(true)
    })
  }
})
