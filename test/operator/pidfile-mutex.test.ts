import {readdirSync, readFileSync, writeFileSync, existsSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {acquirePidFile, readPidFile, removePidFileIf} from '../../src/state/pidfile.js'
import {makeTempDir} from '../support/tmp.js'

const DEAD = '999999 2020-01-01T00:00:00.000Z\n'

function tempPidFile(): string {
  return path.join(makeTempDir('helix-pidmutex-'), 'helix.pid')
}

describe('run mutex (.ddx/helix.pid) takeover of a dead holder', () => {
  it('a starter that judged the file dead never removes the fresh file a competitor wrote meanwhile', () => {
    const file = tempPidFile()
    writeFileSync(file, DEAD)
    let competitor: ReturnType<typeof acquirePidFile> | undefined
    // we pose as pid 1 (alive, but "started" long after the dead record); the
    // competitor is this test process, alive and matching its record
    const mine = acquirePidFile(file, 1, new Date(), {
      beforeReplace: (dead) => {
        expect(dead.pid).toBe(999999)
        competitor = acquirePidFile(file, process.pid, new Date())
      },
    })
    expect(competitor?.ok).toBe(true)
    expect(mine.ok).toBe(false)
    expect(readPidFile(file)?.pid).toBe(process.pid)
    // no temp files left behind
    expect(readdirSync(path.dirname(file)).sort()).toEqual(['helix.pid'])
  })

  it('the file never exists without its content, and removePidFileIf only removes the record it was given', () => {
    const file = tempPidFile()
    const r = acquirePidFile(file, process.pid, new Date('2026-01-01T00:00:00.000Z'))
    expect(r.ok).toBe(true)
    expect(readFileSync(file, 'utf8')).toBe(`${process.pid} 2026-01-01T00:00:00.000Z\n`)
    expect(removePidFileIf(file, {pid: process.pid, started: 'other'})).toBe(false)
    expect(existsSync(file)).toBe(true)
    expect(removePidFileIf(file, {pid: process.pid, started: '2026-01-01T00:00:00.000Z'})).toBe(true)
    expect(existsSync(file)).toBe(false)
  })
})
