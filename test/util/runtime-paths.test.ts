// helix's runtime lines in .gitignore (SPEC 16.1) are written only into a regular
// file: an agent that commits .gitignore as a symlink (to a file outside the project,
// or to a FIFO that blocked the next run's read and every signal with it) gets a
// refusal in words, nothing written through the link (session 35).
import {execFileSync} from 'node:child_process'
import {readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {ensureIgnored, RUNTIME_IGNORES} from '../../src/util/runtime-paths.js'
import {makeTempDir} from '../support/tmp.js'

describe('ensureIgnored', () => {
  it('appends the missing lines to a regular file once, and creates a missing one', () => {
    const dir = makeTempDir('helix-ignore-')
    const f = path.join(dir, '.gitignore')
    writeFileSync(f, 'node_modules/')
    expect(ensureIgnored(f)).toEqual([...RUNTIME_IGNORES])
    expect(readFileSync(f, 'utf8')).toBe(`node_modules/\n# helix runtime files\n${RUNTIME_IGNORES.join('\n')}\n`)
    expect(ensureIgnored(f)).toEqual([])
    const g = path.join(dir, 'new-ignore')
    expect(ensureIgnored(g)).toEqual([...RUNTIME_IGNORES])
    expect(readFileSync(g, 'utf8')).toBe(`# helix runtime files\n${RUNTIME_IGNORES.join('\n')}\n`)
  })

  it('a symlink to a file outside is refused and the target left as it was; a link to a FIFO does not block', () => {
    const dir = makeTempDir('helix-ignore-')
    const victim = path.join(dir, 'victim')
    writeFileSync(victim, 'mine\n')
    const link = path.join(dir, 'repo-gitignore')
    symlinkSync(victim, link)
    expect(() => ensureIgnored(link)).toThrow(/^repo-gitignore is not a regular file \(a symlink, FIFO or directory\); helix does not write through it: add its runtime paths/)
    expect(readFileSync(victim, 'utf8')).toBe('mine\n')
    const fifo = path.join(dir, 'fifo')
    execFileSync('mkfifo', [fifo])
    expect(() => ensureIgnored(fifo)).toThrow(/is not a regular file/)
    const toFifo = path.join(dir, 'to-fifo')
    symlinkSync(fifo, toFifo)
    expect(() => ensureIgnored(toFifo)).toThrow(/is not a regular file/)
  })
})
