import {describe, expect, it} from 'vitest'
import {normalizeWatchArgv, parseWatchSeconds} from '../../src/status/watch.js'

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
