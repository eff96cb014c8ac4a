// The chunked line reader of `tracker ready` must hand out exactly the lines, line
// numbers and refusals of eachLine over the whole file, wherever its 1 MiB chunks cut.
import {execFileSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {eachTrackerLine} from '../../src/tracker/chunked-lines.js'
import {parseTracker} from '../../src/tracker/codec.js'
import {eachLine, MAX_LINE_BYTES} from '../../src/tracker/lines.js'
import {makeTempDir} from '../support/tmp.js'

function file(content: Buffer | string): string {
  const dir = makeTempDir('helix-chunked-')
  const f = path.join(dir, 'beads.jsonl')
  writeFileSync(f, content)
  return f
}

function wholeFile(buf: Buffer): Array<[number, string]> {
  const out: Array<[number, string]> = []
  eachLine(buf, 0, buf.length, 1, true, (s, e, n) => out.push([n, buf.toString('latin1', s, e)]))
  return out
}

function chunked(f: string): Array<[number, string]> {
  const out: Array<[number, string]> = []
  expect(eachTrackerLine(f, (buf, s, e, n) => out.push([n, buf.toString('latin1', s, e)]))).toBe(true)
  return out
}

describe('eachTrackerLine', () => {
  it('hands out the lines eachLine finds, across chunk edges, CRLF, blank lines, a BOM and a line longer than a chunk', () => {
    const parts: string[] = ['\ufeff{"id":"first"}\r']
    // lines of many lengths so that newlines, CRs and multi-byte characters fall on every side of the 1 MiB edges
    for (let i = 0; i < 4000; i++) parts.push(i % 97 === 0 ? '  \t ' : `{"id":"b${i}","t":"${'é'.repeat(i % 13)}${'x'.repeat((i * 7919) % 1500)}"}${i % 3 === 0 ? '\r' : ''}`)
    parts.push(`{"id":"huge","t":"${'y'.repeat(2_500_000)}"}`)
    parts.push('', '', '{"id":"last-no-newline"}')
    const buf = Buffer.from(parts.join('\n'))
    expect(buf.length).toBeGreaterThan(3 * (1 << 20))
    const got = chunked(file(buf))
    expect(got).toEqual(wholeFile(buf))
    expect(got[0]).toEqual([1, '{"id":"first"}\r'])
    expect(got.at(-1)).toEqual([parts.length, '{"id":"last-no-newline"}'])
  })

  it('reads an empty file, a lone BOM and a file ending in a newline', () => {
    expect(chunked(file(''))).toEqual([])
    expect(chunked(file('\ufeff'))).toEqual([])
    expect(chunked(file('\n{"id":"a"}\n'))).toEqual([[2, '{"id":"a"}']])
  })

  it('a missing file: false; a FIFO: refused at once, as a whole read refuses it', () => {
    const dir = makeTempDir('helix-chunked-')
    expect(eachTrackerLine(path.join(dir, 'none.jsonl'), () => {})).toBe(false)
    const fifo = path.join(dir, 'fifo.jsonl')
    execFileSync('mkfifo', [fifo])
    expect(() => eachTrackerLine(fifo, () => {})).toThrow(/is not a regular file/)
    mkdirSync(path.join(dir, 'd.jsonl'))
    expect(() => eachTrackerLine(path.join(dir, 'd.jsonl'), () => {})).toThrow(/is not a regular file/)
  })

  it('refuses a line over the limit with the strict parse’s error, and reads a blank one that long', () => {
    const long = `{"id":"a"}\n\n{"id":"b","t":"${'z'.repeat(MAX_LINE_BYTES)}"}\n{"id":"c"}\n`
    let want = ''
    try {
      parseTracker(long, 'F')
    } catch (error) {
      want = (error as Error).message
    }
    expect(want).toMatch(/:3: malformed bead \(line longer than/)
    const f = file(long)
    const seen: number[] = []
    expect(() => eachTrackerLine(f, (_b, _s, _e, n) => seen.push(n))).toThrow(want.replace(/^F/, f))
    expect(seen).toEqual([1])
    const blank = `{"id":"a"}\n${' '.repeat(MAX_LINE_BYTES + 10)}\n{"id":"c"}\n`
    expect(chunked(file(blank))).toEqual([
      [1, '{"id":"a"}'],
      [3, '{"id":"c"}'],
    ])
  })
})
