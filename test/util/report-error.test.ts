import {existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {openSessionLog} from '../../src/output/session-log.js'
import {ClaimConflictError, EXIT, HelixError} from '../../src/util/errors.js'
import {reportError, setBugLog} from '../../src/util/report-error.js'
import {makeTempDir} from '../support/tmp.js'

const NOW = new Date(2026, 0, 2, 3, 4, 5)

/** reportError with its line captured, in `cwd`, falling back to `tmpdir` */
function report(error: unknown, cwd: string, tmpdir = makeTempDir('helix-bugtmp-')) {
  const lines: string[] = []
  const code = reportError(error, {write: (l) => lines.push(l), cwd, tmpdir, now: NOW})
  return {code, text: lines.join(''), tmpdir}
}

function project(): string {
  const root = makeTempDir('helix-bug-')
  mkdirSync(path.join(root, '.ddx'))
  return root
}

function bug(): TypeError {
  // a real one, with a real stack
  try {
    ;(undefined as unknown as {boom: () => void}).boom()
  } catch (error) {
    return error as TypeError
  }
  throw new Error('unreachable')
}

const FILE_IN = (dir: string) => new RegExp(`^helix: internal error: Cannot read properties of undefined \\(reading 'boom'\\) \\(a bug in helix; the stack is in ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/internal-error-20260102-030405-\\d+\\.log\\)\\n$`)

describe('reportError: the one way a failure leaves a command', () => {
  afterEach(() => setBugLog(undefined))

  it('a HelixError is its message on one sanitized line and its own exit code; no file is written', () => {
    const dir = project()
    expect(report(new HelixError('bead hx-1\nFAKE: line \u001b[31mred'), dir)).toMatchObject({code: EXIT.ERROR, text: 'helix: bead hx-1⏎FAKE: line ?[31mred\n'})
    expect(report(new ClaimConflictError('hx-2 is claimed by someone else'), dir)).toMatchObject({code: EXIT.CLAIM, text: 'helix: hx-2 is claimed by someone else\n'})
    expect(report(new HelixError('helix run: already running', EXIT.BUSY), dir)).toMatchObject({code: EXIT.BUSY, text: 'helix run: already running\n'})
    expect(readdirSync(dir)).toEqual(['.ddx'])
  })

  it("anything else is a bug: one line naming the file that keeps its stack, in the project's .helix-logs/", () => {
    const dir = project()
    const error = bug()
    const r = report(error, path.join(dir, '.ddx'))
    expect(r.code).toBe(EXIT.ERROR)
    expect(r.text).toMatch(FILE_IN(path.join(dir, '.helix-logs')))
    const file = r.text.match(/the stack is in (.*)\)\n$/)![1]
    const kept = readFileSync(file, 'utf8')
    expect(kept).toContain(error.stack!)
    expect(kept).toContain('report-error.test.ts')
    expect(readdirSync(r.tmpdir)).toEqual([])
  })

  it('outside a project the stack goes to the temp directory; a thrown non-Error still gets a line', () => {
    const dir = makeTempDir('helix-noproj-')
    const r = report(bug(), dir)
    expect(r.text).toMatch(FILE_IN(r.tmpdir))
    expect(readdirSync(dir)).toEqual([])
    const s = report('a string\nthrown', dir)
    expect(s.code).toBe(EXIT.ERROR)
    expect(s.text).toMatch(/^helix: internal error: a string⏎thrown \(a bug in helix; the stack is in .*\.log\)\n$/)
  })

  it('with nowhere to write, the line says the stack could not be saved', () => {
    const dir = makeTempDir('helix-noproj-')
    const file = path.join(dir, 'a-file')
    writeFileSync(file, '')
    // the fallback directory would have to be made under a regular file: ENOTDIR
    const r = report(bug(), dir, path.join(file, 'tmp'))
    expect(r.text).toBe("helix: internal error: Cannot read properties of undefined (reading 'boom') (a bug in helix; its stack could not be saved)\n")
  })

  it('while a session log is open the stack goes into it as a record; after it is closed, as a line appended to it', () => {
    const dir = project()
    const logDir = path.join(dir, '.helix-logs')
    const log = openSessionLog(logDir, NOW)
    log.event('started')
    const open = report(bug(), dir)
    expect(open.text).toBe(`helix: internal error: Cannot read properties of undefined (reading 'boom') (a bug in helix; the stack is in ${log.path})\n`)
    log.close()
    report(new TypeError('second'), dir)
    const records = readFileSync(log.path, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as {msg: string; level: number; stack?: string})
    expect(records.map((r) => [r.msg, r.level])).toEqual([['started', 30], ["internal error: Cannot read properties of undefined (reading 'boom')", 50], ['internal error: second', 50]])
    expect(records[1].stack).toContain('report-error.test.ts')
    // no file of its own
    expect(readdirSync(logDir)).toEqual([path.basename(log.path)])
    expect(existsSync(path.join(open.tmpdir))).toBe(true)
    expect(readdirSync(open.tmpdir)).toEqual([])
  })
})
