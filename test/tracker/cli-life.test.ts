import {readFileSync} from 'node:fs'
import path from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {helixInProcess as helix} from '../support/in-process.js'
import {copyReal, oneLineError, REAL_HELIX, sha, tempProject} from './helpers.js'

// helix tracker's happy paths, each command run in-process (test/support/in-process.ts):
// what they print and write, without ~25 node starts. The process boundary (exit codes as
// the shell sees them, the claim of a claimer that has exited) is cli-life.e2e.test.ts's and
// cli-errors'.

// One tracker taken through its whole life, one step per `it`; the steps share the project
// and run in order.
describe('helix tracker: happy paths', () => {
  let root: string
  let A: string
  let B: {id: string}
  beforeAll(() => {
    root = tempProject().root
  })

  it('init, and init again', async () => {
    const init = await helix(root, ['tracker', 'init'])
    expect(init.code).toBe(0)
    expect(readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8')).toBe('')
    expect(readFileSync(path.join(root, '.ddx', 'config.yaml'), 'utf8')).toContain('id_prefix: "hx"')
    expect((await helix(root, ['tracker', 'init'])).stdout).toMatch(/^already initialized/)
  })

  it('create, flags before the positional argument', async () => {
    const a = await helix(root, ['tracker', 'create', 'first', '--priority', '1', '--labels', 'x,y'])
    expect(a.code).toBe(0)
    A = a.stdout.trim()
    expect(A).toMatch(/^hx-[0-9a-f]{8}$/)
    // flags before the positional argument
    const b = await helix(root, ['tracker', 'create', '--deps', A, '--json', '--set', 'queue-rank=3', '--set', 'custom.key=v', 'second'])
    expect(b.code).toBe(0)
    B = JSON.parse(b.stdout)
    expect(B).toMatchObject({title: 'second', 'queue-rank': 3, 'custom.key': 'v', status: 'open', priority: 2})
  })

  it('ready, blocked, show', async () => {
    expect((await helix(root, ['tracker', 'ready'])).stdout).toBe(`${A}  P1  [open] first\n`)
    expect(JSON.parse((await helix(root, ['tracker', 'ready', '--execution', '--json'])).stdout).map((x: {id: string}) => x.id)).toEqual([A])
    expect((await helix(root, ['tracker', 'blocked'])).stdout).toBe(`${B.id}  P2  [open] second  (waiting on ${A})\n`)
    expect(JSON.parse((await helix(root, ['tracker', 'blocked', '--json'])).stdout)[0].waiting_on).toEqual([A])
    const show = await helix(root, ['tracker', 'show', B.id])
    expect(show.stdout.split('\n')[0]).toBe(`[open] ${B.id} (task) — second`)
    expect(show.stdout).toContain(`  depends on: ${A} (open)\n`)
    expect(JSON.parse((await helix(root, ['tracker', 'show', '--json', A])).stdout).labels).toEqual(['x', 'y'])
  })

  it('update, status', async () => {
    expect((await helix(root, ['tracker', 'update', '--title', 'first!', A, '--add-label', 'z', '--append-notes', 'hello'])).code).toBe(0)
    const shownA = JSON.parse((await helix(root, ['tracker', 'show', A, '--json'])).stdout)
    expect(shownA).toMatchObject({title: 'first!', labels: ['x', 'y', 'z'], notes: 'hello'})

    expect((await helix(root, ['tracker', 'status', '--json'])).stdout).toBe('{"total":2,"open":2,"in_progress":0,"closed":0,"blocked":1,"proposed":0,"cancelled":0,"ready":1}\n')
    expect((await helix(root, ['tracker', 'status'])).stdout).toContain('In progress: 0\n')
  })

  it('close, list, dep tree', async () => {
    const close = await helix(root, ['tracker', 'close', A])
    expect([close.code, close.stdout]).toEqual([0, `closed ${A}\n`])
    expect((await helix(root, ['tracker', 'list', '--status', 'closed'])).stdout).toBe(`${A}  P1  [closed] first!\n`)
    expect(JSON.parse((await helix(root, ['tracker', 'list', '--json', '--label', 'z'])).stdout)).toHaveLength(1)
    expect((await helix(root, ['tracker', 'dep', 'tree', B.id])).stdout).toBe(`${B.id} [open] second\n└── ${A} [closed] first!\n`)
  })

  it('reopen, dep remove / add, doctor', async () => {
    expect((await helix(root, ['tracker', 'reopen', A, '--reason', 'not done'])).code).toBe(0)
    expect(JSON.parse((await helix(root, ['tracker', 'show', A, '--json'])).stdout).notes).toBe('hello\n\nnot done')
    expect((await helix(root, ['tracker', 'dep', 'remove', B.id, A])).code).toBe(0)
    expect((await helix(root, ['tracker', 'dep', 'add', A, B.id])).stdout).toBe(`${A} now depends on ${B.id}\n`)
    expect((await helix(root, ['tracker', 'doctor'])).code).toBe(0)
  })

  it('HELIX_OWNER and --assignee name the claimer', async () => {
    const {root} = tempProject('{"id":"hx-1","title":"t"}\n{"id":"hx-2","title":"t"}\n')
    expect(JSON.parse((await helix(root, ['tracker', 'update', 'hx-1', '--claim', '--json'], {HELIX_OWNER: 'night'})).stdout).owner).toBe('night')
    expect(JSON.parse((await helix(root, ['tracker', 'update', 'hx-2', '--json', '--assignee', 'bob', '--claim'])).stdout).owner).toBe('bob')
  })

  it('DDX_BEAD_PREFIX and DDX_BEAD_DIR', async () => {
    const {root} = tempProject()
    const r = await helix(root, ['tracker', 'create', 'x'], {DDX_BEAD_PREFIX: 'zz', DDX_BEAD_DIR: 'alt'})
    expect(r.stdout).toMatch(/^zz-[0-9a-f]{8}\n$/)
    expect(readFileSync(path.join(root, 'alt', 'beads.jsonl'), 'utf8')).toContain('"title":"x"')
  })

})

// issue 30: were in cli-life.e2e; nothing in them crosses the process boundary
describe('helix tracker: the real tracker', () => {
  it('a no-op rewrite keeps the real tracker byte-identical and one update changes one line', async () => {
    const {root, paths} = copyReal(REAL_HELIX)
    const before = readFileSync(paths.file, 'utf8').split('\n')
    const id = JSON.parse(before[100]).id
    expect((await helix(root, ['tracker', 'update', id, '--append-notes', 'x'])).code).toBe(0)
    const after = readFileSync(paths.file, 'utf8').split('\n')
    expect(after.map((l, i) => (l === before[i] ? null : i)).filter((x) => x !== null)).toEqual([100])
  })
})

describe('helix tracker: messages about helix-prefixed ids', () => {
  // the real helix tracker's ids start with "helix-": the "helix: " prefix must still be added
  it('keep the helix: prefix', async () => {
    const {root, paths} = tempProject('{"id":"helix-1","status":"closed","title":"c"}\n{"id":"helix-2","title":"o"}\n')
    const un = await helix(root, ['tracker', 'update', 'helix-1', '--unclaim'])
    expect([un.code, un.stderr]).toEqual([0, 'helix: helix-1 is closed; leaving it closed\n'])
    const h = sha(paths.file)
    oneLineError(await helix(root, ['tracker', 'dep', 'add', 'helix-2', 'helix-2']), 1, 'helix: helix-2 cannot depend on itself')
    oneLineError(await helix(root, ['tracker', 'dep', 'remove', 'helix-2', 'helix-1']), 1, 'helix: helix-2 does not depend on helix-1')
    expect(sha(paths.file)).toBe(h)
  })
})
