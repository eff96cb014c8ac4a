import {once} from 'node:events'
import {describe, expect, it} from 'vitest'
import {looksLikeHelixRun, pidMatchesRecord, processStartMs} from '../../src/proc/pid-identity.js'
import {readFileSync} from 'node:fs'
import {makeTempDir, trackProcess} from '../support/tmp.js'
import {waitFor} from '../support/wait.js'

describe('pid identity', () => {
  it('knows when this process started (Linux /proc)', () => {
    const start = processStartMs(process.pid)
    expect(start).not.toBeNull()
    const expected = Date.now() - process.uptime() * 1000
    expect(Math.abs(start! - expected)).toBeLessThan(5_000)
  })

  it('a record written after the process started matches; one from long before does not (non-helix process)', async () => {
    const {spawn} = await import('node:child_process')
    const c = trackProcess(spawn('sleep', ['30'], {stdio: 'ignore'}))
    try {
      await once(c, 'spawn')
      // until the child has become `sleep` its command line can still read as the
      // worker's, or empty, which identity rightly treats as "cannot tell" (a match)
      await waitFor(() => readFileSync(`/proc/${c.pid}/cmdline`, 'utf8').startsWith('sleep\0'))
      expect(pidMatchesRecord(c.pid!, new Date().toISOString())).toBe(true)
      expect(pidMatchesRecord(c.pid!, '2020-01-01T00:00:00Z')).toBe(false)
    } finally {
      c.kill('SIGKILL')
    }
    // issue 9: an unparsable (or missing, or future) start field is never trusted
    expect(pidMatchesRecord(process.pid, 'not a time')).toBe(false)
    expect(pidMatchesRecord(process.pid, '')).toBe(false)
    expect(pidMatchesRecord(process.pid, '2099-01-01T00:00:00.000Z')).toBe(false)
    expect(pidMatchesRecord(999_999_999, '2020-01-01T00:00:00Z')).toBe(true) // unknown: trust kill(0)
  })
})

describe('a helix run whose start time looks later than recorded (clock stepped forward)', () => {
  it('is still the run: the command line says helix run', async () => {
    const {spawn} = await import('node:child_process')
    const {writeFileSync} = await import('node:fs')
    const path = await import('node:path')
    const dir = makeTempDir('helix-ops-id-')
    // a stand-in whose command line looks like the CLI's, not the CLI: nothing to run through the rig
    // eslint-disable-next-line no-restricted-syntax
    const fake = path.join(dir, 'bin', 'run.js')
    ;(await import('node:fs')).mkdirSync(path.dirname(fake))
    writeFileSync(fake, 'setTimeout(() => {}, 30000)\n')
    const c = trackProcess(spawn(process.execPath, [fake, 'run', '--summary'], {stdio: 'ignore'}))
    try {
      await once(c, 'spawn') // exec done: the command line is the fake run's
      expect(looksLikeHelixRun(c.pid!)).toBe(true)
      expect(pidMatchesRecord(c.pid!, '2020-01-01T00:00:00Z')).toBe(true)
    } finally {
      c.kill('SIGKILL')
    }
  })
})
