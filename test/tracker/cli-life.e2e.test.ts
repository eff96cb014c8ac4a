import {readFileSync} from 'node:fs'
import path from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {helix, sha, tempProject, copyReal, REAL_HELIX, oneLineError} from './helpers.js'

// helix tracker through the built CLI, part 1 of 3 (split for the suite's parallel workers):
// the happy paths and the helix: prefix. Parts 2 and 3: cli-errors, cli-text.

// One tracker taken through its whole life, one step per `it` (each a few CLI calls, so no
// single test runs long on a loaded machine); the steps share the project and run in order.
describe('helix tracker: happy paths', () => {
  let root: string
  let A: string
  let B: {id: string}
  beforeAll(() => {
    root = tempProject().root
  })

  it('init, and init again', () => {
    const init = helix(root, ['tracker', 'init'])
    expect(init.code).toBe(0)
    expect(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8')).toBe('')
    expect(readFileSync(path.join(root, '.ddx', 'config.yaml'), 'utf8')).toContain('id_prefix: "hx"')
    expect(helix(root, ['tracker', 'init']).stdout).toMatch(/^already initialized/)
  })

  it('create, flags before the positional argument', () => {
    const a = helix(root, ['tracker', 'create', 'first', '--priority', '1', '--labels', 'x,y'])
    expect(a.code).toBe(0)
    A = a.stdout.trim()
    expect(A).toMatch(/^hx-[0-9a-f]{8}$/)
    // flags before the positional argument
    const b = helix(root, ['tracker', 'create', '--deps', A, '--json', '--set', 'queue-rank=3', '--set', 'custom.key=v', 'second'])
    expect(b.code).toBe(0)
    B = JSON.parse(b.stdout)
    expect(B).toMatchObject({title: 'second', 'queue-rank': 3, 'custom.key': 'v', status: 'open', priority: 2})
  })

  it('ready, blocked, show', () => {
    expect(helix(root, ['tracker', 'ready']).stdout).toBe(`${A}  P1  [open] first\n`)
    expect(JSON.parse(helix(root, ['tracker', 'ready', '--execution', '--json']).stdout).map((x: {id: string}) => x.id)).toEqual([A])
    expect(helix(root, ['tracker', 'blocked']).stdout).toBe(`${B.id}  P2  [open] second  (waiting on ${A})\n`)
    expect(JSON.parse(helix(root, ['tracker', 'blocked', '--json']).stdout)[0].waiting_on).toEqual([A])
    const show = helix(root, ['tracker', 'show', B.id])
    expect(show.stdout.split('\n')[0]).toBe(`[open] ${B.id} (task) — second`)
    expect(show.stdout).toContain(`  depends on: ${A} (open)\n`)
    expect(JSON.parse(helix(root, ['tracker', 'show', '--json', A]).stdout).labels).toEqual(['x', 'y'])
  })

  it('update, status', () => {
    expect(helix(root, ['tracker', 'update', '--title', 'first!', A, '--add-label', 'z', '--append-notes', 'hello']).code).toBe(0)
    const shownA = JSON.parse(helix(root, ['tracker', 'show', A, '--json']).stdout)
    expect(shownA).toMatchObject({title: 'first!', labels: ['x', 'y', 'z'], notes: 'hello'})

    expect(helix(root, ['tracker', 'status', '--json']).stdout).toBe('{"total":2,"open":2,"in_progress":0,"closed":0,"blocked":1,"proposed":0,"cancelled":0,"ready":1}\n')
    expect(helix(root, ['tracker', 'status']).stdout).toContain('In progress: 0\n')
  })

  it('close, list, dep tree', () => {
    const close = helix(root, ['tracker', 'close', A])
    expect([close.code, close.stdout]).toEqual([0, `closed ${A}\n`])
    expect(helix(root, ['tracker', 'list', '--status', 'closed']).stdout).toBe(`${A}  P1  [closed] first!\n`)
    expect(JSON.parse(helix(root, ['tracker', 'list', '--json', '--label', 'z']).stdout)).toHaveLength(1)
    expect(helix(root, ['tracker', 'dep', 'tree', B.id]).stdout).toBe(`${B.id} [open] second\n└── ${A} [closed] first!\n`)
  })

  it('reopen, dep remove / add, doctor', () => {
    expect(helix(root, ['tracker', 'reopen', A, '--reason', 'not done']).code).toBe(0)
    expect(JSON.parse(helix(root, ['tracker', 'show', A, '--json']).stdout).notes).toBe('hello\n\nnot done')
    expect(helix(root, ['tracker', 'dep', 'remove', B.id, A]).code).toBe(0)
    expect(helix(root, ['tracker', 'dep', 'add', A, B.id]).stdout).toBe(`${A} now depends on ${B.id}\n`)
    expect(helix(root, ['tracker', 'doctor']).code).toBe(0)
  })

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

  it('HELIX_OWNER and --assignee name the claimer', () => {
    const {root} = tempProject('{"id":"hx-1","title":"t"}\n{"id":"hx-2","title":"t"}\n')
    expect(JSON.parse(helix(root, ['tracker', 'update', 'hx-1', '--claim', '--json'], {HELIX_OWNER: 'night'}).stdout).owner).toBe('night')
    expect(JSON.parse(helix(root, ['tracker', 'update', 'hx-2', '--json', '--assignee', 'bob', '--claim']).stdout).owner).toBe('bob')
  })

  it('DDX_BEAD_PREFIX and DDX_BEAD_DIR', () => {
    const {root} = tempProject()
    const r = helix(root, ['tracker', 'create', 'x'], {DDX_BEAD_PREFIX: 'zz', DDX_BEAD_DIR: 'alt'})
    expect(r.stdout).toMatch(/^zz-[0-9a-f]{8}\n$/)
    expect(readFileSync(path.join(root, 'alt', 'beads.jsonl'), 'utf8')).toContain('"title":"x"')
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
