import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {spawn} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import {trials} from '../support/stress.js'
import {makeTempDir, trackProcess} from '../support/tmp.js'

const REPO = path.resolve(import.meta.dirname, '..', '..')
const DEAD = '999999 2020-01-01T00:00:00.000Z\n'
/** races of six processes: 5 under npm run test:stress, 1 in npm test's smoke */
const TRIALS = trials(5, 1)

function tempPidFile(): string {
  return path.join(makeTempDir('helix-pidmutex-'), 'helix.pid')
}

describe('run mutex (.ddx/helix.pid) takeover of a dead holder, raced (built dist/state/pidfile.js)', () => {
  it('six real processes racing over a dead pid file: at most one holds the mutex', async () => {
    // every child holds on (alive, so its file stays a live mutex) until all
    // six have answered; only then are their stdins closed
    const script = `
      const {acquirePidFile} = await import(${JSON.stringify(path.join(REPO, 'dist', 'state', 'pidfile.js'))})
      const r = acquirePidFile(process.argv[1])
      process.stdout.write(r.ok ? 'OK' : 'BUSY')
      process.stdin.resume()
      process.stdin.on('end', () => process.exit(0))`
    for (let trial = 0; trial < TRIALS; trial++) {
      const file = tempPidFile()
      writeFileSync(file, DEAD)
      const children = Array.from({length: 6}, () =>
        trackProcess(spawn(process.execPath, ['--input-type=module', '-e', script, file], {env: {...process.env, NODE_ENV: 'production'}})),
      )
      const outs = await Promise.all(
        children.map(
          (c) =>
            new Promise<string>((resolve) => {
              c.stdout.once('data', (d) => resolve(String(d)))
              c.once('close', () => resolve('exited'))
            }),
        ),
      )
      await Promise.all(children.map((c) => new Promise((resolve) => (c.once('close', resolve), c.stdin.end()))))
      expect(outs.filter((o) => o === 'OK')).toHaveLength(1)
    }
  })
})
