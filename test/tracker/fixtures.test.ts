import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {parseTracker, serializeTracker} from '../../src/tracker/codec.js'
import {readyBeads, blockedBeads} from '../../src/tracker/queries.js'
import {staleClaimIds} from '../../src/tracker/liveness.js'
import {REPO, fakeProbe} from './helpers.js'

const dir = path.join(REPO, 'fixtures', 'trackers')

describe('seed trackers', () => {
  it('small.jsonl is canonical and has the documented ready set', async () => {
    const file = path.join(dir, 'small.jsonl')
    const text = readFileSync(file, 'utf8')
    const snap = parseTracker(text, file)
    expect(serializeTracker(snap.beads)).toBe(text)
    const stale = await staleClaimIds(snap, fakeProbe({host: 'here'}), new Date('2026-06-01T00:00:00Z'), 7200)
    expect([...stale]).toEqual(['hx-0000b004'])
    expect(readyBeads(snap, {staleClaims: stale}).map((b) => b.id)).toEqual(['hx-0000a002', 'hx-0000b001', 'hx-0000b004'])
    expect(blockedBeads(snap).map((b) => b.bead.id)).toEqual(['hx-0000a003', 'hx-0000b005'])
  })

  it('malformed.jsonl fails at line 4', () => {
    const file = path.join(dir, 'malformed.jsonl')
    expect(() => parseTracker(readFileSync(file, 'utf8'), file)).toThrow(`${file}:4: malformed bead (invalid JSON`)
  })
})
