import {readFileSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {logStamp, openSessionLog} from '../../src/output/session-log.js'
import {makeTempDir} from '../support/tmp.js'

function tmp(): string {
  return makeTempDir('helix-log-')
}

describe('session log', () => {
  it('creates .helix-logs/helix-<stamp>.log and writes one line per record', () => {
    const dir = path.join(tmp(), '.helix-logs')
    const now = new Date(2026, 0, 2, 3, 4, 5)
    const log = openSessionLog(dir, now)
    expect(path.basename(log.path)).toBe('helix-20260102-030405.log')
    log.event('run start', {cycle: 1})
    log.agentLine('hello %s %d world', {dispatch: 1})
    log.agentLine('line with "quotes" and \u2028 separator', {dispatch: 1})
    log.event('warned', {msg: 'not this'}, 'warn')
    expect(log.lines).toBe(4)
    log.close()
    const recs = readFileSync(log.path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    expect(recs).toHaveLength(4)
    expect(recs[0]).toMatchObject({msg: 'run start', cycle: 1, level: 30})
    expect(typeof recs[0].time).toBe('number')
    expect(recs[1]).toMatchObject({msg: 'hello %s %d world', stream: 'agent', dispatch: 1})
    expect(recs[2].msg).toBe('line with "quotes" and \u2028 separator')
    expect(recs[3]).toMatchObject({msg: 'warned', level: 40})
  })

  it('never shares a file: a taken name moves to the next second', () => {
    const dir = tmp()
    const now = new Date(2026, 0, 2, 3, 4, 59)
    writeFileSync(path.join(dir, `helix-${logStamp(now)}.log`), 'someone else\n')
    const a = openSessionLog(dir, now)
    const b = openSessionLog(dir, now)
    expect(path.basename(a.path)).toBe('helix-20260102-030500.log')
    expect(path.basename(b.path)).toBe('helix-20260102-030501.log')
    a.close()
    b.close()
    expect(readFileSync(path.join(dir, 'helix-20260102-030459.log'), 'utf8')).toBe('someone else\n')
    expect(readdirSync(dir)).toHaveLength(3)
  })

  it('ignores writes after close', () => {
    const log = openSessionLog(tmp())
    log.event('one')
    log.close()
    log.event('two')
    expect(log.lines).toBe(1)
    expect(readFileSync(log.path, 'utf8').trim().split('\n')).toHaveLength(1)
  })
})
