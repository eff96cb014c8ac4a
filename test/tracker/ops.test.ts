import {chmodSync, mkdirSync, readFileSync, writeFileSync, existsSync} from 'node:fs'
import path from 'node:path'
import {describe, expect, it} from 'vitest'
import {
  addLabel, appendNote, claimBead, closeBead, createBead, depAdd, depRemove, idPrefix, reopenBead, setFields, unclaimBead, updateBead,
} from '../../src/tracker/ops.js'
import {readTracker} from '../../src/tracker/store.js'
import {ClaimConflictError, HelixError} from '../../src/util/errors.js'
import {fakeProbe, sha, tempProject} from './helpers.js'

const NOW = new Date('2026-06-01T12:00:00.000Z')
const claimOpts = (extra = {}) => ({probe: fakeProbe({host: 'here'}), thresholdSec: 7200, now: NOW, machine: 'here', pid: 4242, startToken: 'S1', ...extra})

async function err(p: Promise<unknown>): Promise<HelixError> {
  const e = await p.then(() => undefined, (x) => x)
  expect(e).toBeInstanceOf(HelixError)
  return e as HelixError
}

describe('create', () => {
  it('creates a canonical record with a prefixed id and deps', async () => {
    const {paths} = tempProject()
    const a = await createBead(paths, {title: 'first', now: NOW}, {})
    expect(a.id).toMatch(/^hx-[0-9a-f]{8}$/)
    const b = await createBead(paths, {title: 'second', deps: 'x'.length ? [a.id] : [], labels: 'p,q', priority: '0', type: 'bug', specId: 'S-1', executionEligible: 'false', set: {'queue-rank': '3', custom: 'v'}, now: NOW}, {})
    const snap = await readTracker(paths.file)
    expect(snap.byId.get(b.id)).toEqual({
      id: b.id, title: 'second', status: 'open', priority: 0, issue_type: 'bug', schema_version: 1,
      created_at: '2026-06-01T12:00:00.000Z', updated_at: '2026-06-01T12:00:00.000Z', labels: ['p', 'q'],
      'spec-id': 'S-1', 'execution-eligible': false, 'queue-rank': 3, custom: 'v',
      dependencies: [{issue_id: b.id, depends_on_id: a.id, type: 'blocks', created_at: '2026-06-01T12:00:00.000Z'}],
    })
  })

  it('refuses bad input without touching the file', async () => {
    const {paths} = tempProject('{"id":"hx-1","title":"t"}\n')
    const h = sha(paths.file)
    expect((await err(createBead(paths, {title: '  '}, {}))).message).toBe('title must not be blank')
    expect((await err(createBead(paths, {title: 't', priority: 7}, {}))).message).toBe("invalid priority '7' (expected an integer 0-4)")
    expect((await err(createBead(paths, {title: 't', deps: ['nope']}, {}))).message).toBe("unknown dependency 'nope'")
    expect((await err(createBead(paths, {title: 't', parent: 'nope'}, {}))).message).toBe("unknown parent 'nope'")
    expect((await err(createBead(paths, {title: 't', set: {id: 'x'}}, {}))).message).toBe('cannot set id')
    expect(sha(paths.file)).toBe(h)
  })

  it('prefix: env, then config.yaml bead.id_prefix, then hx', () => {
    const {root, paths} = tempProject()
    expect(idPrefix(paths, {})).toBe('hx')
    writeFileSync(path.join(root, '.ddx', 'config.yaml'), 'version: 1\nbead:\n  # comment\n  id_prefix: "ddx"\nother: 2\n')
    expect(idPrefix(paths, {})).toBe('ddx')
    expect(idPrefix(paths, {DDX_BEAD_PREFIX: 'zz'})).toBe('zz')
  })

  it('runs the validate-bead-create hook with the record on stdin: 1 refuses, 2 warns', async () => {
    const {root, paths} = tempProject()
    mkdirSync(path.join(root, '.ddx', 'hooks'))
    const hook = path.join(root, '.ddx', 'hooks', 'validate-bead-create')
    const seen = path.join(root, 'seen.json')
    writeFileSync(hook, `#!/bin/sh\ncat > "${seen}"\ncase "$(cat "${seen}")" in *refuse*) echo "no refusing" >&2; exit 1;; *warn*) echo "careful" >&2; exit 2;; esac\nexit 0\n`)
    chmodSync(hook, 0o755)
    const ok = await createBead(paths, {title: 'fine'}, {})
    expect(JSON.parse(readFileSync(seen, 'utf8')).id).toBe(ok.id)
    const warnings: string[] = []
    await createBead(paths, {title: 'please warn', warn: (l) => warnings.push(l)}, {})
    expect(warnings).toEqual(['helix: warning: validate-bead-create: careful'])
    const before = sha(paths.file)
    expect((await err(createBead(paths, {title: 'refuse me'}, {}))).message).toBe('validate-bead-create refused the bead: no refusing')
    expect(sha(paths.file)).toBe(before)
  })
})

describe('claim / unclaim / close / reopen', () => {
  const base = [
    '{"id":"a","status":"open","title":"A"}',
    '{"dependencies":[{"issue_id":"b","depends_on_id":"a","type":"blocks"}],"id":"b","title":"B"}',
    '{"id":"c","status":"closed","title":"C"}',
    '{"claimed-at":"2026-06-01T11:59:00Z","claimed-machine":"here","claimed-pid":"77","id":"d","owner":"other","status":"in_progress","title":"D"}',
    '{"claimed-at":"2026-05-01T00:00:00Z","claimed-machine":"here","claimed-pid":"77","id":"e","owner":"helix","status":"in_progress","title":"E"}',
  ].join('\n') + '\n'

  it('claims an open bead with all claim fields', async () => {
    const {paths} = tempProject(base)
    // the claimer (pid 4242, start S1) is alive: its claim is live
    const live = {probe: fakeProbe({host: 'here', running: {4242: 'S1'}})}
    const b = await claimBead(paths, 'a', claimOpts(live))
    expect(b).toMatchObject({status: 'in_progress', owner: 'helix', 'claimed-at': NOW.toISOString(), 'claimed-pid': 4242, 'claimed-machine': 'here', 'claimed-start': 'S1', updated_at: NOW.toISOString()})
    expect(b['claim-token']).toMatch(/^[0-9a-f]{16}$/)
    const e = await err(claimBead(paths, 'a', claimOpts(live)))
    expect([e.exitCode, e.message]).toEqual([3, 'cannot claim a: already claimed by helix (pid 4242)'])
    expect(e).toBeInstanceOf(ClaimConflictError) // the loop skips the bead on instanceof, not on the code
    // SPEC 13.3: the same claim with its claimer provably dead (this host, start token, pid gone) is stale at once
    const again = await claimBead(paths, 'a', claimOpts({pid: 4243}))
    expect(again['claimed-pid']).toBe(4243)
  })

  it('refuses closed, unmet deps, live claims (exit 3); takes over stale claims', async () => {
    const {paths} = tempProject(base)
    const h = sha(paths.file)
    expect((await err(claimBead(paths, 'c', claimOpts()))).message).toBe('cannot claim c: closed')
    expect((await err(claimBead(paths, 'b', claimOpts()))).message).toBe('cannot claim b: waiting on dependencies a')
    const d = await err(claimBead(paths, 'd', claimOpts()))
    expect([d.exitCode, d.message]).toEqual([3, 'cannot claim d: already claimed by other (pid 77)'])
    expect((await err(claimBead(paths, 'zz', claimOpts()))).exitCode).toBe(1)
    expect(await err(claimBead(paths, 'zz', claimOpts()))).not.toBeInstanceOf(ClaimConflictError) // unknown bead is not a conflict
    expect(sha(paths.file)).toBe(h)
    // another owner's stale claim is never taken (SPEC 13.3)
    expect((await err(claimBead(paths, 'e', claimOpts({owner: 'me'})))).message).toBe('cannot claim e: already claimed by helix (pid 77)')
    const e = await claimBead(paths, 'e', claimOpts())
    expect(e).toMatchObject({owner: 'helix', 'claimed-pid': 4242})
  })

  it('a stale claim with a live pid (same start token) is not taken; a reused pid is', async () => {
    const body = '{"claimed-at":"2026-05-01T00:00:00Z","claimed-machine":"here","claimed-pid":77,"claimed-start":"T1","id":"e","status":"in_progress"}\n'
    const {paths} = tempProject(body)
    expect((await err(claimBead(paths, 'e', claimOpts({probe: fakeProbe({host: 'here', running: {77: 'T1'}})})))).exitCode).toBe(3)
    await claimBead(paths, 'e', claimOpts({probe: fakeProbe({host: 'here', running: {77: 'T9'}})}))
  })

  it('unclaim removes owner and claim keys; closed stays closed', async () => {
    const {paths} = tempProject(base)
    await claimBead(paths, 'a', claimOpts())
    const r = await unclaimBead(paths, 'a', {now: NOW})
    expect(r.changed).toBe(true)
    const a = (await readTracker(paths.file)).byId.get('a')!
    expect(Object.keys(a).sort()).toEqual(['id', 'status', 'title', 'updated_at'])
    expect(a.status).toBe('open')
    const h = sha(paths.file)
    expect(await unclaimBead(paths, 'c')).toMatchObject({closed: true, changed: false})
    expect(sha(paths.file)).toBe(h)
  })

  it('close: deps open → exit 1; token mismatch → exit 3; removes claim keys', async () => {
    const {paths} = tempProject(base)
    const e1 = await err(closeBead(paths, 'b'))
    expect([e1.exitCode, e1.message]).toEqual([1, 'cannot close b: dependencies not closed: a'])
    const claimed = await claimBead(paths, 'a', claimOpts())
    const e3 = await err(closeBead(paths, 'a', {claimToken: 'bogus'}))
    expect([e3.exitCode, e3.message]).toEqual([3, 'claim on a was lost (token mismatch); not changing it'])
    expect(e3).toBeInstanceOf(ClaimConflictError)
    const closed = await closeBead(paths, 'a', {claimToken: claimed['claim-token'] as string, now: NOW})
    expect(closed.status).toBe('closed')
    expect(Object.keys(closed).filter((k) => k.startsWith('claim'))).toEqual([])
    expect(closed.owner).toBe('helix')
    await closeBead(paths, 'b')
  })

  it('the fence covers the target and any claimed bead, not unclaimed side beads', async () => {
    const {paths} = tempProject('{"id":"t"}\n{"id":"side"}\n{"id":"other"}\n')
    const t = await claimBead(paths, 't', claimOpts())
    const other = await claimBead(paths, 'other', claimOpts())
    const tok = t['claim-token'] as string
    expect((await closeBead(paths, 'side', {claimToken: tok, targetId: 't'})).status).toBe('closed')
    expect((await err(closeBead(paths, 'other', {claimToken: tok, targetId: 't'}))).exitCode).toBe(3)
    expect(other['claim-token']).not.toBe(tok)
    await unclaimBead(paths, 't')
    // reclaimed/unclaimed target: refused even though it now has no token
    expect((await err(closeBead(paths, 't', {claimToken: tok, targetId: 't'}))).message).toBe('claim on t was lost (token mismatch); not changing it')
    // SPEC 13.3: a bead without a claim token that is not HELIX_BEAD_ID is not fenced
    const {paths: p2} = tempProject('{"id":"x"}\n')
    expect((await closeBead(p2, 'x', {claimToken: tok})).status).toBe('closed')
  })

  it('reopen with a reason appends to notes after a blank line', async () => {
    const {paths} = tempProject('{"id":"x","notes":"old","status":"closed"}\n{"id":"y"}\n')
    const x = await reopenBead(paths, 'x', 'drifted')
    expect(x).toMatchObject({status: 'open', notes: 'old\n\ndrifted'})
    expect((await err(reopenBead(paths, 'y'))).exitCode).toBe(1)
  })
})

describe('update and helpers', () => {
  it('nothing to update → exit 1', async () => {
    const {paths} = tempProject('{"id":"x"}\n')
    const e = await err(updateBead(paths, 'x', {}))
    expect([e.exitCode, e.message]).toEqual([1, 'nothing to update'])
  })

  it('changes fields, labels, notes, set/unset; one line only', async () => {
    const {paths} = tempProject('{"id":"a"}\n{"id":"x","labels":["l1","l2"],"notes":"n","zap":1}\n{"id":"z"}\n')
    const before = readFileSync(paths.file, 'utf8').split('\n')
    const b = await updateBead(paths, 'x', {title: 'T', priority: 1, addLabels: ['l3'], removeLabels: ['l1'], appendNotes: 'more', set: {'queue-rank': '2', k: 'v'}, unset: ['zap'], status: 'blocked', now: NOW})
    expect(b).toEqual({id: 'x', title: 'T', priority: 1, labels: ['l2', 'l3'], notes: 'n\n\nmore', 'queue-rank': 2, k: 'v', status: 'blocked', updated_at: NOW.toISOString()})
    const after = readFileSync(paths.file, 'utf8').split('\n')
    expect(after.filter((l, i) => l !== before[i])).toHaveLength(1)
    expect((await err(updateBead(paths, 'x', {status: 'weird'}))).message).toMatch(/^invalid status 'weird'/)
    expect((await err(updateBead(paths, 'x', {parent: 'x'}))).exitCode).toBe(1)
  })

  it('appendNote once, addLabel, setFields', async () => {
    const {paths} = tempProject('{"id":"x","labels":["a"]}\n')
    expect(await appendNote(paths, 'x', 'blocked: reason', {once: true})).toBe(true)
    expect(await appendNote(paths, 'x', 'blocked: reason', {once: true})).toBe(false)
    expect(await addLabel(paths, 'x', 'blocked')).toBe(true)
    expect(await addLabel(paths, 'x', 'blocked')).toBe(false)
    await setFields(paths, 'x', {'queue-rank': 1, labels: undefined})
    const x = (await readTracker(paths.file)).byId.get('x')!
    expect(x).toMatchObject({notes: 'blocked: reason', 'queue-rank': 1})
    expect(x.labels).toBeUndefined()
  })

  it('dep add refuses self, unknown ids and cycles; remove', async () => {
    const {paths} = tempProject('{"id":"a"}\n{"id":"b"}\n{"id":"c"}\n')
    await depAdd(paths, 'a', 'b')
    await depAdd(paths, 'b', 'c')
    expect(await depAdd(paths, 'a', 'b')).toEqual({changed: false})
    const h = sha(paths.file)
    expect((await err(depAdd(paths, 'c', 'a'))).message).toBe('dependency cycle: c -> a -> b -> c')
    expect((await err(depAdd(paths, 'a', 'a'))).message).toBe('a cannot depend on itself')
    expect((await err(depAdd(paths, 'a', 'q'))).message).toBe('bead q not found')
    expect(sha(paths.file)).toBe(h)
    await depRemove(paths, 'a', 'b')
    expect((await err(depRemove(paths, 'a', 'b'))).message).toBe('a does not depend on b')
    expect((await readTracker(paths.file)).byId.get('a')!.dependencies).toBeUndefined()
    expect(readFileSync(paths.file, 'utf8')).not.toContain('"dependencies":[]')
    expect(existsSync(paths.lockDir)).toBe(false)
  })
})

describe('update --status closed follows the close rules', () => {
  it('refuses open dependencies and a lost claim, removes claim keys, keeps owner', async () => {
    const {paths} = tempProject('{"id":"a","title":"A"}\n{"dependencies":[{"issue_id":"b","depends_on_id":"a","type":"blocks"}],"id":"b","title":"B"}\n')
    const h = sha(paths.file)
    const e1 = await err(updateBead(paths, 'b', {status: 'closed'}))
    expect([e1.exitCode, e1.message]).toEqual([1, 'cannot close b: dependencies not closed: a'])
    expect(sha(paths.file)).toBe(h)
    const claimed = await claimBead(paths, 'a', claimOpts())
    const h2 = sha(paths.file)
    const e3 = await err(updateBead(paths, 'a', {status: 'closed', claimToken: 'bogus', targetId: 'a'}))
    expect([e3.exitCode, e3.message]).toEqual([3, 'claim on a was lost (token mismatch); not changing it'])
    expect(sha(paths.file)).toBe(h2)
    const a = await updateBead(paths, 'a', {status: 'closed', claimToken: claimed['claim-token'] as string, targetId: 'a', now: NOW})
    expect(a.status).toBe('closed')
    expect(Object.keys(a).filter((k) => k.startsWith('claim'))).toEqual([])
    expect(a.owner).toBe('helix')
    expect((await updateBead(paths, 'b', {status: 'closed'})).status).toBe('closed')
  })

  it('leaving in_progress through --status drops the claim keys', async () => {
    const {paths} = tempProject('{"id":"a","title":"A"}\n')
    await claimBead(paths, 'a', claimOpts())
    const a = await updateBead(paths, 'a', {status: 'blocked', now: NOW})
    expect(a.status).toBe('blocked')
    expect(Object.keys(a).filter((k) => k.startsWith('claim'))).toEqual([])
  })
})
