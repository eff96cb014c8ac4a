// The chunked line reader of `tracker ready` must hand out exactly the lines, line
// numbers, texts and refusals of the strict parse (eachLine over the whole file, each
// line decoded on its own), wherever its 1 MiB reads and 64 KiB decoded pieces cut,
// ASCII piece or not.
import {execFileSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {eachTrackerText} from '../../src/tracker/chunked-lines.js'
import {parseTracker} from '../../src/tracker/codec.js'
import {eachLine, MAX_LINE_BYTES, RawLine} from '../../src/tracker/lines.js'
import {makeTempDir} from '../support/tmp.js'

function file(content: Buffer | string): string {
  const dir = makeTempDir('helix-chunked-')
  const f = path.join(dir, 'beads.jsonl')
  writeFileSync(f, content)
  return f
}

/** the strict parse's view: each line of the whole file decoded on its own (RawLine.text) */
function wholeFile(buf: Buffer): Array<[number, string]> {
  const out: Array<[number, string]> = []
  eachLine(buf, 0, buf.length, 1, true, (s, e, n) => out.push([n, new RawLine(buf, s, e).text]))
  return out
}

function chunked(f: string): Array<[number, string]> {
  const out: Array<[number, string]> = []
  expect(eachTrackerText(f, (text, n) => out.push([n, text]))).toBe(true)
  return out
}

// the reader's read size and the size of the pieces it decodes at once
const READ = 1 << 20
const PIECE = 1 << 16

describe('eachTrackerText', () => {
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
    expect(got[0]).toEqual([1, '{"id":"first"}'])
    expect(got.at(-1)).toEqual([parts.length, '{"id":"last-no-newline"}'])
  })

  it('decodes as each line alone would: multi-byte characters and invalid UTF-8 across chunk edges, ASCII chunks beside others', () => {
    const ascii = (i: number) => Buffer.from(`{"id":"a${i}","t":"${'x'.repeat((i * 613) % 900)}"}\n`)
    // 4-byte, 3-byte and 2-byte characters; a lone continuation byte, an overlong lead, a
    // sequence cut short inside a line and one cut short by the line's end (before a CR, too)
    const odd = [Buffer.from('😀€é'), Buffer.from([0x80]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xe2, 0x82]), Buffer.from([0xff, 0xfe])]
    const parts: Buffer[] = [Buffer.from('\ufeff')]
    let size = 3
    for (let i = 0; size < 2.5 * READ; i++) {
      let b = ascii(i)
      // the line over the first read's edge has a 4-byte character cut in two by it
      if (size < READ && size + b.length > READ) b = Buffer.concat([Buffer.from(`{"id":"edge","t":"${'e'.repeat(READ - size - 20)}`), odd[0], Buffer.from('"}\n')])
      // a line longer than a piece, with a multi-byte character past the piece's size
      else if (i === 300) b = Buffer.from(`{"id":"long","t":"${'l'.repeat(PIECE + 100)}é"}\n`)
      // and one line in nine has odd bytes somewhere (later reads start wherever the last whole line ended)
      else if (i % 9 === 4) b = Buffer.concat([Buffer.from(`{"id":"o${i}","t":"${'z'.repeat((i * 37) % 700)}`), odd[i % odd.length], Buffer.from(i % 2 ? '"}\n' : '"}\r\n')])
      parts.push(b)
      size += b.length
    }
    parts.push(Buffer.from('{"id":"end","t":"'), Buffer.from([0xe2, 0x82]), Buffer.from('\r\n{"id":"cut'), Buffer.from([0xf0, 0x9f]))
    const buf = Buffer.concat(parts)
    const got = chunked(file(buf))
    const want = wholeFile(buf)
    expect(got).toEqual(want)
    expect(want.filter(([, t]) => t.includes('\ufffd')).length).toBeGreaterThan(5)
    expect(want.filter(([, t]) => t.includes('😀€é')).length).toBeGreaterThan(0)
    expect(got.at(-1)).toEqual([want.length, '{"id":"cut\ufffd'])
  })

  it('reads an empty file, a lone BOM and a file ending in a newline', () => {
    expect(chunked(file(''))).toEqual([])
    expect(chunked(file('\ufeff'))).toEqual([])
    expect(chunked(file('\n{"id":"a"}\n'))).toEqual([[2, '{"id":"a"}']])
  })

  it('a missing file: false; a FIFO: refused at once, as a whole read refuses it', () => {
    const dir = makeTempDir('helix-chunked-')
    expect(eachTrackerText(path.join(dir, 'none.jsonl'), () => {})).toBe(false)
    const fifo = path.join(dir, 'fifo.jsonl')
    execFileSync('mkfifo', [fifo])
    expect(() => eachTrackerText(fifo, () => {})).toThrow(/is not a regular file/)
    mkdirSync(path.join(dir, 'd.jsonl'))
    expect(() => eachTrackerText(path.join(dir, 'd.jsonl'), () => {})).toThrow(/is not a regular file/)
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
    expect(() => eachTrackerText(f, (_t, n) => seen.push(n))).toThrow(want.replace(/^F/, f))
    expect(seen).toEqual([1])
    const blank = `{"id":"a"}\n${' '.repeat(MAX_LINE_BYTES + 10)}\n{"id":"c"}\n`
    expect(chunked(file(blank))).toEqual([
      [1, '{"id":"a"}'],
      [3, '{"id":"c"}'],
    ])
  })
})
