import {readFileSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {helix, sha, tempProject, copyReal, REAL_HELIX, oneLineError} from './helpers.js'

// helix tracker through the built CLI, part 1 of 3 (split for the suite's parallel workers):
// claims, a write to the real tracker and the helix: prefix (the happy paths run in-process:
// cli-life.test.ts). Parts 2 and 3: cli-errors, cli-text.

// The happy paths' text runs in-process (cli-life.test.ts); what stays here needs the
// process: the claimer's pid, the real tracker's bytes after a real CLI write.
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

  it('a no-op rewrite keeps the real tracker byte-identical and one update changes one line', () => {
    const {root, paths} = copyReal(REAL_HELIX)
    const before = readFileSync(paths.file, 'utf8').split('\n')
    const id = JSON.parse(before[100]).id
    expect(helix(root, ['tracker', 'update', id, '--append-notes', 'x']).code).toBe(0)
    const after = readFileSync(paths.file, 'utf8').split('\n')
    expect(after.map((l, i) => (l === before[i] ? null : i)).filter((x) => x !== null)).toEqual([100])
  })
})

describe('helix tracker: messages about helix-prefixed ids', () => {
  // the real helix tracker's ids start with "helix-": the "helix: " prefix must still be added
  it('keep the helix: prefix', () => {
    const {root, paths} = tempProject('{"id":"helix-1","status":"closed","title":"c"}\n{"id":"helix-2","title":"o"}\n')
    const un = helix(root, ['tracker', 'update', 'helix-1', '--unclaim'])
    expect([un.code, un.stderr]).toEqual([0, 'helix: helix-1 is closed; leaving it closed\n'])
    const h = sha(paths.file)
    oneLineError(helix(root, ['tracker', 'dep', 'add', 'helix-2', 'helix-2']), 1, 'helix: helix-2 cannot depend on itself')
    oneLineError(helix(root, ['tracker', 'dep', 'remove', 'helix-2', 'helix-1']), 1, 'helix: helix-2 does not depend on helix-1')
    expect(sha(paths.file)).toBe(h)
  })
})
