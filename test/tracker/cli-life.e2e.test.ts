import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helix, sha, tempProject, oneLineError} from './helpers.js'

// helix tracker through the built CLI, part 1 of 3 (split for the suite's parallel workers):
// claims (the happy paths, a write to the real tracker and the helix: prefix run in-process:
// cli-life.test.ts). Parts 2 and 3: cli-errors, cli-text.

// What stays here needs the process: a claim whose claimer (the CLI) has exited, the pid it
// recorded, the fence against another process's token.
describe('helix tracker: through the built CLI', () => {
  it('claim / unclaim through update; close fenced by HELIX_CLAIM_TOKEN', () => {
    const {root} = tempProject('{"id":"hx-1","title":"t"}\n{"id":"hx-2","status":"closed","title":"c"}\n')
    const c = helix(root, ['tracker', 'update', 'hx-1', '--claim', '--json'])
    expect(c.code).toBe(0)
    const claimed = JSON.parse(c.stdout)
    expect(claimed).toMatchObject({status: 'in_progress', owner: 'helix'})
    expect(typeof claimed['claimed-pid']).toBe('number')
    oneLineError(helix(root, ['tracker', 'update', 'hx-1', '--claim']), 3, `helix: cannot claim hx-1: already claimed by helix (pid ${claimed['claimed-pid']})`)
    const before = sha(path.join(root, '.ddx', 'beads.jsonl'))
    oneLineError(helix(root, ['tracker', 'close', 'hx-1'], {HELIX_CLAIM_TOKEN: 'nope'}), 3, 'helix: claim on hx-1 was lost (token mismatch); not changing it')
    expect(sha(path.join(root, '.ddx', 'beads.jsonl'))).toBe(before)
    // `update --status closed` is not a way around the fence
    oneLineError(helix(root, ['tracker', 'update', 'hx-1', '--status', 'closed'], {HELIX_CLAIM_TOKEN: 'nope', HELIX_BEAD_ID: 'hx-1'}), 3, 'helix: claim on hx-1 was lost (token mismatch); not changing it')
    expect(sha(path.join(root, '.ddx', 'beads.jsonl'))).toBe(before)
    const un = helix(root, ['tracker', 'update', 'hx-2', '--unclaim'])
    expect([un.code, un.stderr]).toEqual([0, 'helix: hx-2 is closed; leaving it closed\n'])
    expect(helix(root, ['tracker', 'close', 'hx-1'], {HELIX_CLAIM_TOKEN: claimed['claim-token']}).code).toBe(0)
  })
})
