import {describe, expect, it} from 'vitest'
import {readTracker} from '../../src/tracker/store.js'
import {addSpend, spendOf} from '../../src/tracker/add-spend.js'
import {tempProject} from './helpers.js'

describe('per-bead spend on the bead (SPEC 14.6)', () => {
  it('adds up under the lock, survives a re-read, and leaves the other fields alone', async () => {
    const {paths} = tempProject(JSON.stringify({id: 'hx-1', title: 't', status: 'open', priority: 2, issue_type: 'task', created_at: '2026-01-01T00:00:00Z', labels: ['a']}) + '\n')
    expect(await addSpend(paths, 'hx-1', 600, 0)).toEqual({tokens: 600, costUsd: 0})
    expect(await addSpend(paths, 'hx-1', 600, 0.1)).toEqual({tokens: 1200, costUsd: 0.1})
    await addSpend(paths, 'hx-1', 0, 0.2)
    const b = (await readTracker(paths.file)).byId.get('hx-1')!
    expect(spendOf(b)).toEqual({tokens: 1200, costUsd: 0.3})
    expect(b['helix-tokens']).toBe(1200)
    expect(b.labels).toEqual(['a'])
    await expect(addSpend(paths, 'hx-nope', 1, 0)).rejects.toThrow(/not found/)
  })

  it('a missing or garbled field reads as no spend', () => {
    expect(spendOf({id: 'x'} as never)).toEqual({tokens: 0, costUsd: 0})
    expect(spendOf({id: 'x', 'helix-tokens': 'lots', 'helix-cost': -3} as never)).toEqual({tokens: 0, costUsd: 0})
  })
})
