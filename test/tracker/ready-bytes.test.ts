// Session 30: `tracker ready --json` writes its answer as bytes (jsonLineBytes): an all-ASCII
// answer is copied byte for byte, any other goes through the UTF-8 encoder. The bytes must be
// those of the string answer in every case, so each kind of character is checked on its own.
import {describe, expect, it} from 'vitest'
import {jsonLine, jsonLineBytes, trackerReadyOutput, trackerReadyWrite} from '../../src/tracker/query-text.js'
import {readTracker} from '../../src/tracker/store.js'
import {helixInProcess} from '../support/in-process.js'
import {copyReal, REAL_DDX, REAL_HELIX, tempProject} from './helpers.js'

const same = (v: unknown): void => {
  const want = Buffer.from(jsonLine(v), 'utf8')
  const got = jsonLineBytes(v)
  expect(got.equals(want)).toBe(true)
  expect(got.toString('utf8')).toBe(jsonLine(v))
}

describe('jsonLineBytes: the UTF-8 bytes of jsonLine', () => {
  it('ASCII, with escapes and the last ASCII character', () => {
    same([{id: 'hx-1', title: 'a <b> & "c"\n\t\\', n: 1.5, ok: true, none: null, del: '\u007f', ctl: '\u0001'}])
    same([])
    same('')
  })

  it('characters a latin1 copy would get wrong: U+0080–U+00FF, BMP, astral, lone surrogates, U+2028', () => {
    for (const s of ['é', '\u0080', 'ÿ', 'Ω', '中文', '\u2028\u2029', '🙂', '\ud800', 'x\udfff', 'caf\u00e9 and 🙂']) same([{id: 'hx-1', title: s}])
  })

  it('a long answer (past the buffer pool) with one non-ASCII character at its very end', () => {
    const beads = Array.from({length: 3000}, (_, i) => ({id: `hx-${i}`, title: 'x'.repeat(50)}))
    same(beads)
    beads[beads.length - 1].title += 'é'
    same(beads)
  })
})

describe('tracker ready writes what it would print as text', () => {
  it('the same bytes as the string answer, --json and text, on both real trackers', async () => {
    for (const file of [REAL_DDX, REAL_HELIX]) {
      const {root} = copyReal(file)
      for (const json of [true, false]) {
        const env = {}
        const text = await trackerReadyOutput({cwd: root, env, json})
        const out = await trackerReadyWrite({cwd: root, env, json})
        expect(Buffer.from(out).equals(Buffer.from(text, 'utf8'))).toBe(true)
        if (json) expect(JSON.parse(text).length).toBeGreaterThan(0)
      }
    }
  })

  it('an empty tracker answers []', async () => {
    const {root} = tempProject('')
    expect(String(await trackerReadyWrite({cwd: root, env: {}, json: true}))).toBe('[]\n')
  })

  it('the commands print those bytes: tracker ready --json and tracker list --json (non-ASCII text in both)', async () => {
    const {root, paths} = copyReal(REAL_DDX)
    const ready = await helixInProcess(root, ['tracker', 'ready', '--json'])
    expect(ready.code).toBe(0)
    expect(ready.stdout).toBe(await trackerReadyOutput({cwd: root, env: {}, json: true}))
    expect(ready.stdout).toMatch(/[^\x00-\x7f]/)
    const list = await helixInProcess(root, ['tracker', 'list', '--json'])
    expect(list.code).toBe(0)
    expect(list.stdout).toBe(jsonLine((await readTracker(paths.file)).beads))
    expect(list.stdout).toMatch(/[^\x00-\x7f]/)
  })
})
