import {describe, expect, it} from 'vitest'
import {normalizeWatchArgv, parseWatchSeconds, watchLoop} from '../../src/operator/watch.js'

describe('--watch [SECONDS] argv normalisation', () => {
  it('bare --watch gets the default interval, anywhere in argv', () => {
    expect(normalizeWatchArgv(['--watch'])).toEqual(['--watch', '2'])
    expect(normalizeWatchArgv(['--watch', '--json'])).toEqual(['--watch', '2', '--json'])
    expect(normalizeWatchArgv(['--json', '--watch'])).toEqual(['--json', '--watch', '2'])
    expect(normalizeWatchArgv(['-w'])).toEqual(['-w', '2'])
  })
  it('an explicit interval is kept', () => {
    expect(normalizeWatchArgv(['--watch', '5'])).toEqual(['--watch', '5'])
    expect(normalizeWatchArgv(['--watch', '0.5', '--json'])).toEqual(['--watch', '0.5', '--json'])
    expect(normalizeWatchArgv(['--watch=7'])).toEqual(['--watch=7'])
    expect(normalizeWatchArgv([])).toEqual([])
  })
  it('validates the interval', () => {
    expect(parseWatchSeconds('5')).toBe(5)
    expect(() => parseWatchSeconds('abc')).toThrow(/number of seconds/)
    expect(() => parseWatchSeconds('0')).toThrow(/between/)
  })
})

/** a terminal of `columns` × `rows` that keeps what is written to it */
function fakeOut(columns: number, rows: number): {chunks: string[]; out: NodeJS.WriteStream} {
  const chunks: string[] = []
  return {chunks, out: {columns, rows, write: (s: string) => (chunks.push(s), true)} as unknown as NodeJS.WriteStream}
}

describe('watchLoop', () => {
  it('draws frames in place, survives a failing frame, stops on abort and restores the cursor', async () => {
    const {chunks, out} = fakeOut(40, 6)
    const ac = new AbortController()
    let n = 0
    await watchLoop({
      intervalSec: 0.2,
      out,
      signal: ac.signal,
      now: () => new Date(2026, 0, 1, 12, 0, 0),
      frame: async ({width, height}) => {
        n++
        expect(width).toBe(40)
        expect(height).toBe(5)
        if (n === 1) throw new Error('tracker went away\nsecond line')
        ac.abort()
        return Array.from({length: 10}, (_, i) => `line ${i}`).join('\n') + '\n'
      },
    })
    const all = chunks.join('')
    expect(all.startsWith('\u001b[2J\u001b[H\u001b[?25l')).toBe(true)
    expect(all).toContain('helix status: tracker went away\u001b[K')
    expect(all).not.toContain('second line')
    const last = chunks[chunks.length - 2]
    // header + 5 body rows = 6 rows: never more than the pane
    expect(last.split('\n')).toHaveLength(6)
    expect(last.endsWith('line 4\u001b[K\u001b[J')).toBe(true)
    expect(chunks[chunks.length - 1]).toBe('\u001b[?25h')
  })

  it('plain (a file, a pipe, TERM=dumb): no escape bytes, each frame whole after a blank line', async () => {
    const {chunks, out} = fakeOut(40, 3)
    const ac = new AbortController()
    let n = 0
    await watchLoop({
      intervalSec: 0.2,
      out,
      signal: ac.signal,
      plain: true,
      now: () => new Date(2026, 0, 1, 12, 0, 0),
      frame: async () => {
        if (++n === 2) ac.abort()
        return `frame ${n}\nrow a\nrow b\nrow c\n`
      },
    })
    const all = chunks.join('')
    expect(all).not.toContain('\u001b')
    expect(all).toBe('helix status · 0.2s · 12:00:00\nframe 1\nrow a\nrow b\nrow c\n\nhelix status · 0.2s · 12:00:00\nframe 2\nrow a\nrow b\nrow c\n')
  })
})
