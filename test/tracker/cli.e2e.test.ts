import {existsSync, readFileSync, writeFileSync, mkdirSync, readdirSync} from 'node:fs'
import path from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {acquireTrackerLock} from '../../src/tracker/store.js'
import {BIN, helix, helixAsync, sha, tempProject, copyReal, REAL_HELIX} from './helpers.js'

beforeAll(() => {
  if (!existsSync(path.join(path.dirname(BIN), '..', 'dist', 'commands', 'tracker', 'ready.js'))) throw new Error('run `npm run build` before the e2e tests')
})

function oneLineError(r: {code: number | null; stdout: string; stderr: string}, code: number, text: RegExp | string): void {
  expect(r.code).toBe(code)
  expect(r.stdout).toBe('')
  const lines = r.stderr.split('\n').filter(Boolean)
  expect(lines).toHaveLength(1)
  if (typeof text === 'string') expect(lines[0]).toBe(text)
  else expect(lines[0]).toMatch(text)
}

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

describe('helix tracker: bad input changes nothing', () => {
  const body = '{"id":"hx-1","title":"one"}\n{"dependencies":[{"issue_id":"hx-2","depends_on_id":"hx-1","type":"blocks"}],"id":"hx-2","title":"two"}\n'
  const cases: Array<[string, string[], number, RegExp | string]> = [
    ['unknown id (show)', ['tracker', 'show', 'hx-9'], 1, 'helix: bead hx-9 not found'],
    ['unknown id (update)', ['tracker', 'update', 'hx-9', '--title', 'x'], 1, 'helix: bead hx-9 not found'],
    ['unknown id (close)', ['tracker', 'close', 'hx-9'], 1, 'helix: bead hx-9 not found'],
    ['priority 7 (create)', ['tracker', 'create', 'x', '--priority', '7'], 1, "helix: invalid priority '7' (expected an integer 0-4)"],
    ['priority 7 (update)', ['tracker', 'update', 'hx-1', '--priority', '7'], 1, "helix: invalid priority '7' (expected an integer 0-4)"],
    ['blank title', ['tracker', 'create', '   '], 1, 'helix: title must not be blank'],
    ['unknown flag', ['tracker', 'create', 'x', '--bogus'], 1, /^helix: Nonexistent flag: --bogus/],
    ['missing arg', ['tracker', 'show'], 1, 'helix: missing required argument: id'],
    ['missing args', ['tracker', 'dep', 'add'], 1, 'helix: missing required arguments: id, depends-on'],
    ['missing required flag', ['tracker', 'import'], 1, 'helix: Missing required flag from'],
    ['unknown dep', ['tracker', 'create', 'x', '--deps', 'hx-1,hx-404'], 1, "helix: unknown dependency 'hx-404'"],
    ['unknown parent', ['tracker', 'create', 'x', '--parent', 'hx-404'], 1, "helix: unknown parent 'hx-404'"],
    ['dep cycle', ['tracker', 'dep', 'add', 'hx-1', 'hx-2'], 1, 'helix: dependency cycle: hx-1 -> hx-2 -> hx-1'],
    ['dep self', ['tracker', 'dep', 'add', 'hx-1', 'hx-1'], 1, 'helix: hx-1 cannot depend on itself'],
    ['dep unknown', ['tracker', 'dep', 'add', 'hx-1', 'hx-404'], 1, 'helix: bead hx-404 not found'],
    ['nothing to update', ['tracker', 'update', 'hx-1'], 1, 'helix: nothing to update'],
    ['bad status', ['tracker', 'update', 'hx-1', '--status', 'done'], 1, /^helix: invalid status 'done'/],
    ['close with open dep', ['tracker', 'close', 'hx-2'], 1, 'helix: cannot close hx-2: dependencies not closed: hx-1'],
    ['claim blocked', ['tracker', 'update', 'hx-2', '--claim'], 3, 'helix: cannot claim hx-2: waiting on dependencies hx-1'],
    ['bad --set', ['tracker', 'update', 'hx-1', '--set', 'novalue'], 1, "helix: invalid --set 'novalue' (expected key=value)"],
    ['set id', ['tracker', 'update', 'hx-1', '--set', 'id=x'], 1, 'helix: cannot set id'],
    ['set status', ['tracker', 'update', 'hx-1', '--set', 'status=closed'], 1, 'helix: use --status (or --claim/--unclaim) to change status'],
    ['reopen open', ['tracker', 'reopen', 'hx-1'], 1, /^helix: cannot reopen hx-1: it is open/],
    ['bad execution-eligible', ['tracker', 'create', 'x', '--execution-eligible', 'maybe'], 1, /^helix: Expected --execution-eligible=maybe to be one of/],
  ]
  for (const [name, args, code, msg] of cases) {
    it(name, () => {
      const {root, paths} = tempProject(body)
      const h = sha(paths.file)
      oneLineError(helix(root, args), code, msg)
      expect(sha(paths.file)).toBe(h)
      expect(existsSync(paths.lockDir)).toBe(false)
    })
  }

  it('a held lock times out with exit 2 after HELIX_LOCK_TIMEOUT', async () => {
    const {root, paths} = tempProject(body)
    const h = sha(paths.file)
    const lock = await acquireTrackerLock(paths, 1)
    try {
      const r = await helixAsync(root, ['tracker', 'update', 'hx-1', '--title', 'x'], {HELIX_LOCK_TIMEOUT: '1'})
      oneLineError(r, 2, 'helix: tracker is locked by another writer (waited 1s)')
    } finally {
      await lock.release()
    }
    expect(sha(paths.file)).toBe(h)
  })

  it('a malformed tracker stops every reading command with file:line and is not touched', () => {
    const {root, paths} = tempProject('{"id":"hx-1","title":"one"}\n{"id": broken\n')
    const h = sha(paths.file)
    const msg = `helix: ${paths.file}:2: malformed bead (invalid JSON`
    for (const args of [['tracker', 'ready'], ['tracker', 'status', '--json'], ['tracker', 'list'], ['tracker', 'show', 'hx-1'], ['tracker', 'blocked'], ['tracker', 'update', 'hx-1', '--title', 'x'], ['tracker', 'create', 'x']]) {
      const r = helix(root, args)
      expect(r.code).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1)
      expect(r.stderr.startsWith(msg)).toBe(true)
      expect(r.stderr.trim().endsWith("— run 'helix tracker doctor' to inspect or repair")).toBe(true)
    }
    expect(sha(paths.file)).toBe(h)
  })
})

describe('helix tracker: untrusted text', () => {
  it('quotes, $(…), %s, newlines and non-ASCII are stored and printed literally; nothing runs', () => {
    const {root} = tempProject()
    const title = `it's "quoted" $(touch pwned) \`touch pwned2\` %s %d %j; rm -rf / é☃ <b>&`
    const notes = 'line1\nline2 $(touch pwned3)\n%s'
    const r = helix(root, ['tracker', 'create', title, '--notes', notes, '--json'])
    expect(r.code).toBe(0)
    const rec = JSON.parse(r.stdout)
    expect(rec.title).toBe(title)
    expect(rec.notes).toBe(notes)
    const shown = helix(root, ['tracker', 'show', rec.id])
    expect(shown.stdout.split('\n')[0]).toBe(`[open] ${rec.id} (task) — ${title}`)
    expect(shown.stdout).toContain('  notes: line1\n    line2 $(touch pwned3)\n    %s\n')
    expect(helix(root, ['tracker', 'ready']).stdout).toBe(`${rec.id}  P2  [open] ${title}\n`)
    const file = readFileSync(path.join(root, '.ddx', 'beads.jsonl'), 'utf8')
    expect(file).toContain('é☃ \\u003cb\\u003e\\u0026')
    expect(file.split('\n').filter(Boolean)).toHaveLength(1)
    expect(readdirSync(root).filter((f) => f.startsWith('pwned'))).toEqual([])
  })
})

describe('helix tracker: doctor, import, export', () => {
  it('doctor reports problems and --repair moves malformed and losing duplicate lines aside', () => {
    const body = [
      '{"id":"a","title":"old a"}',
      'garbage line',
      '{"dependencies":[{"issue_id":"b","depends_on_id":"ghost","type":"blocks"}],"id":"b","parent":"nobody"}',
      '{"id":"a","title":"new a"}',
      '{"dependencies":[{"issue_id":"c","depends_on_id":"d","type":"blocks"}],"id":"c"}',
      '{"dependencies":[{"issue_id":"d","depends_on_id":"c","type":"blocks"}],"id":"d"}',
      '{"claimed-at":"2020-01-01T00:00:00Z","claimed-machine":"elsewhere","id":"e","owner":"helix","status":"in_progress"}',
      '{"id":"f","priority":9}',
    ].join('\n') + '\n'
    const {root, paths} = tempProject(body)
    const h = sha(paths.file)
    const r = helix(root, ['tracker', 'doctor'])
    expect(r.code).toBe(1)
    expect(r.stdout).toContain(`${paths.file}:2: malformed bead (invalid JSON`)
    expect(r.stdout).toContain('duplicate id a (the last line wins)')
    expect(r.stdout).toContain('b depends on missing ghost')
    expect(r.stdout).toContain('b has missing parent nobody')
    expect(r.stdout).toContain('dependency cycle: c -> d -> c')
    expect(r.stdout).toContain('stale claim on e')
    expect(r.stdout).toContain('f: invalid field priority')
    expect(sha(paths.file)).toBe(h)
    const j = JSON.parse(helix(root, ['tracker', 'doctor', '--json']).stdout)
    expect(j.malformed).toEqual([{line: 2, reason: expect.stringMatching(/^invalid JSON/)}])

    const rep = helix(root, ['tracker', 'doctor', '--repair'])
    expect(rep.stdout).toMatch(/repaired: moved 2 line\(s\) to .*beads\.jsonl\.rejected-\d{8}T\d{6}Z/)
    const rejected = readdirSync(path.join(root, '.ddx')).find((f) => f.startsWith('beads.jsonl.rejected-'))!
    expect(readFileSync(path.join(root, '.ddx', rejected), 'utf8')).toBe('{"id":"a","title":"old a"}\ngarbage line\n')
    const now = readFileSync(paths.file, 'utf8')
    expect(now).toContain('"title":"new a"')
    expect(now).not.toContain('garbage')
    expect(helix(root, ['tracker', 'ready']).code).toBe(0)
  })

  it('imports bd JSONL (field and parent mapping, skips reported) and exports it back', () => {
    const {root, paths} = tempProject('{"id":"hx-1","title":"existing"}\n')
    mkdirSync(path.join(root, '.beads'))
    writeFileSync(
      path.join(root, '.beads', 'issues.jsonl'),
      [
        JSON.stringify({id: 'bd-1', title: 'epic', issue_type: 'epic', status: 'open', priority: 1, assignee: 'ann', acceptance_criteria: 'works'}),
        JSON.stringify({id: 'bd-2', title: 'kid', status: 'open', priority: 2, dependencies: [{issue_id: 'bd-2', depends_on_id: 'bd-1', type: 'parent-child'}, {issue_id: 'bd-2', depends_on_id: 'hx-1', type: 'blocks'}]}),
        JSON.stringify({id: 'hx-1', title: 'dupe'}),
        'not json',
      ].join('\n') + '\n',
    )
    const r = helix(root, ['tracker', 'import', '--from', 'bd'])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^imported 2 bead\(s\) from .*issues\.jsonl, skipped 2\n$/)
    expect(r.stderr).toContain('helix: skipped hx-1: already in the tracker')
    expect(r.stderr).toContain('helix: skipped line 4: malformed')
    const snap = readFileSync(paths.file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const bd1 = snap.find((b) => b.id === 'bd-1')
    const bd2 = snap.find((b) => b.id === 'bd-2')
    expect(bd1).toMatchObject({owner: 'ann', acceptance: 'works', schema_version: 1})
    expect(bd1.assignee).toBeUndefined()
    expect(bd2.parent).toBe('bd-1')
    expect(bd2.dependencies).toEqual([{issue_id: 'bd-2', depends_on_id: 'hx-1', type: 'blocks'}])

    const out = helix(root, ['tracker', 'export', '--to', 'bd'])
    const recs = out.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    const e1 = recs.find((b) => b.id === 'bd-1')
    const e2 = recs.find((b) => b.id === 'bd-2')
    expect(e1).toMatchObject({assignee: 'ann', acceptance_criteria: 'works'})
    expect(e1.owner).toBeUndefined()
    expect(e2.dependencies).toContainEqual({issue_id: 'bd-2', depends_on_id: 'bd-1', type: 'parent-child'})
    const f = helix(root, ['tracker', 'export', '--file', 'out/bd.jsonl', '--to', 'bd'])
    expect(f.stderr).toMatch(/exported 3 bead\(s\)/)
    expect(readFileSync(path.join(root, 'out', 'bd.jsonl'), 'utf8')).toBe(out.stdout)
  })
})
